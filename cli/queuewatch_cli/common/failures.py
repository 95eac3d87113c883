"""Every operator error as one line and a documented exit code, in one place (main calls `failure`)."""

from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)

from queuewatch.base.errors import QueuewatchError

DONE, NO, BAD_REQUEST, NOT_SET_UP, REFUSED, BUG = 0, 1, 2, 3, 4, 70
DEBUG_ENV = "QUEUEWATCH_DEBUG"
EXIT_CODES = """exit codes:
  0  done
  1  the answer is no: check-config found problems, a silence is not there, the demo failed
  2  the request is wrong: a flag, a config file, a stack or table that is not there
  3  the machine is not set up for AWS: no region, no credentials, an endpoint that does not answer
  4  AWS refused: access denied, throttled, or another service error
  70 a bug in queuewatch: one line here, the traceback with QUEUEWATCH_DEBUG=1
"""


@dataclass(frozen=True)
class Failure:
    message: str
    code: int


def _client_error(error: ClientError) -> Failure:
    details = error.response.get("Error", {})
    code, message = details.get("Code", "Unknown"), details.get("Message", "")
    operation = getattr(error, "operation_name", "the call")
    if code == "ResourceNotFoundException":
        return Failure(f"{operation}: {message or code} (check --stack, --table and --region)", BAD_REQUEST)
    if "AccessDenied" in code or code in {"UnauthorizedOperation", "UnrecognizedClientException"}:
        return Failure(f"AWS refused {operation}: {code}: {message} (see the IAM each command needs)", REFUSED)
    return Failure(f"AWS refused {operation}: {code}: {message}".rstrip(": "), REFUSED)


def failure(error: BaseException) -> Failure:
    """The one line and the exit code for `error`; anything unforeseen is a bug, still one line."""
    if isinstance(error, NoRegionError):
        return Failure(
            "no AWS region: pass --region, or --stack NAME@REGION, or set AWS_DEFAULT_REGION (or the profile's region)",
            NOT_SET_UP,
        )
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return Failure(
            "no AWS credentials: set AWS_PROFILE or the AWS_ACCESS_KEY_ID pair, or run `aws sso login`", NOT_SET_UP
        )
    if isinstance(error, ProfileNotFound):
        return Failure(f"{error} (AWS_PROFILE names a profile not in ~/.aws/config)", NOT_SET_UP)
    if isinstance(error, EndpointConnectionError):
        return Failure(
            f"{error}: nothing answers there (AWS_ENDPOINT_URL set? a local stack is started with "
            "`queuewatch local up`)",
            NOT_SET_UP,
        )
    if isinstance(error, (ReadTimeoutError, ConnectTimeoutError, ConnectionClosedError)):
        # A large read that timed out, or a connection dropped: the endpoint did not answer, nothing is broken.
        return Failure(
            f"AWS did not answer in time: {' '.join(str(error).split())} (try again, or a shorter --from/--to)",
            NOT_SET_UP,
        )
    if isinstance(error, ClientError):
        return _client_error(error)
    if isinstance(error, ParamValidationError):
        return Failure(" ".join(str(error).split()), BAD_REQUEST)
    if isinstance(error, QueuewatchError):
        text = str(error)
        # A config error names every problem, one per line: that is the one message, kept whole.
        return Failure(text, BAD_REQUEST)
    if isinstance(error, KeyboardInterrupt):
        return Failure("interrupted", 130)
    if isinstance(error, BrokenPipeError):
        return Failure("", NO)  # the reader went away (| head): nothing to say
    first = str(error).splitlines()[0] if str(error) else ""
    return Failure(
        f"internal error, please report it: {type(error).__name__}: {first} (set {DEBUG_ENV}=1 for the traceback)",
        BUG,
    )
