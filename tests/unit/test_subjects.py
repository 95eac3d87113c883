"""Every SNS subject is one SNS takes, whatever the config's names hold: a team named by people must page."""

from __future__ import annotations

from typing import Any

from consumers import check_subject
from hypothesis import given
from hypothesis import strategies as st

from queuewatch.adapters.sns import publish
from queuewatch.base.subjects import SUBJECT_LIMIT, ascii_text, sns_subject

TEAM = "Plateforme CI – Zürich"


class StrictSNS:
    """Publish as SNS judges a Subject: refused unless ASCII, one line, printable and under 100 characters."""

    def __init__(self) -> None:
        self.subjects: list[str] = []

    def publish(self, **kwargs: Any) -> dict[str, str]:
        subject = kwargs["Subject"]
        if not (subject.isascii() and subject.isprintable() and len(subject) < SUBJECT_LIMIT and subject[:1] != " "):
            raise ValueError(f"InvalidParameter: Subject {subject!r}")
        self.subjects.append(subject)
        return {"MessageId": "m-1"}


@given(st.text(max_size=400))
def test_any_text_becomes_a_subject_sns_takes(text: str) -> None:
    check_subject(sns_subject(text))


@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "N", "P", "S"]), min_size=1, max_size=98))
def test_a_subject_sns_already_takes_is_left_as_it_is(text: str) -> None:
    subject = " ".join(text.split()) or "x"
    assert sns_subject(subject) == subject


def test_names_people_use_are_spelled_in_ascii_not_dropped() -> None:
    assert ascii_text(TEAM) == "Plateforme CI - Zurich"
    assert ascii_text("Straße “GPU” Łódź Ærø…\nnext\tline") == 'Strasse "GPU" Lodz AEro... next line'
    assert ascii_text("東京 CI") == "?? CI"  # no ASCII spelling: marked, so the name's place still shows


def test_whatever_subject_is_stored_the_publish_sends_one_sns_takes() -> None:
    sns = StrictSNS()
    stored = f"ALARM: P2 1 runner type queueing: Jobs are queueing team {TEAM}\n" + "é" * 200
    publish(sns, "arn:aws:sns:us-east-1:123456789012:t", subject=stored, message="{}", attributes={})  # type: ignore[arg-type]
    [sent] = sns.subjects
    check_subject(sent)
    assert sent.startswith("ALARM: P2 1 runner type queueing: Jobs are queueing team Plateforme CI - Zurich")
