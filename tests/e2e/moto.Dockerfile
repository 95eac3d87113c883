# A moto server for `sam local invoke`, built without a registry: FROM the Lambda Python image
# (CPython 3.13 at /var/lang), installing moto from wheels that the e2e driver downloads on the host
# into the build context, since containers here reach no network.
ARG BASE_IMAGE=public.ecr.aws/lambda/python:3.13-x86_64
FROM ${BASE_IMAGE}
ARG MOTO_VERSION
COPY wheels /tmp/wheels
# pip runs from its own wheel: the offline Lambda image ships an interpreter without pip.
RUN /var/lang/bin/python3.13 "$(ls /tmp/wheels/pip-*.whl)/pip" install --quiet --no-index --no-warn-script-location \
      --find-links /tmp/wheels "moto[server]==${MOTO_VERSION}" \
    && rm -rf /tmp/wheels
EXPOSE 5000
ENTRYPOINT ["/var/lang/bin/python3.13", "-m", "moto.server", "--host", "0.0.0.0", "--port", "5000"]
