"""A real S3-compatible server on 127.0.0.1 for tests: moto's standalone server
(``moto.server.ThreadedMotoServer``), reached by the real clients (pyarrow's S3 filesystem in
curate, boto3 here) over HTTP, with access control turned on.

Two users are made through moto's IAM before access control starts: ``admin`` (every action)
and ``reader`` (``s3:GetObject`` and ``s3:ListBucket`` only). From then on a request signed
with unknown or wrong keys is refused as S3 refuses it, and ``reader`` may not write. The
environment a build reads its credentials from is given by :meth:`S3Server.env`.

Usage (pytest)::

    import s3server
    s3 = s3server.s3   # the fixture

    def test_something(s3: s3server.S3Server, monkeypatch):
        s3.put("drops", {"a.txt": b"..."})
        s3.use(monkeypatch)                  # admin's keys and the endpoint in the environment
        ...
        assert s3.files("dist") == {...}
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

BUCKET = "data"
REGION = "us-east-1"
_READ = ["s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation", "s3:ListAllMyBuckets"]


@dataclass
class S3Server:
    url: str
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # user: (key id, secret)
    admin: Any = None  # a boto3 S3 client signed as admin

    def env(self, user: str = "admin", secret: str | None = None) -> dict[str, str]:
        key, real = self.keys[user]
        return {
            "AWS_ACCESS_KEY_ID": key,
            "AWS_SECRET_ACCESS_KEY": secret if secret is not None else real,
            "AWS_ENDPOINT_URL": self.url,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def use(self, monkeypatch: pytest.MonkeyPatch, user: str = "admin", **kw: str) -> None:
        """The environment of a build signed as ``user``; the filesystems curate made for
        another environment are forgotten."""
        from curate import storage

        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(name, raising=False)
        for name, value in self.env(user, kw.get("secret")).items():
            monkeypatch.setenv(name, value)
        storage._filesystem.cache_clear()

    def put(self, prefix: str, files: dict[str, bytes], bucket: str = BUCKET) -> str:
        for name, data in files.items():
            self.admin.put_object(Bucket=bucket, Key=f"{prefix}/{name}", Body=data)
        return f"s3://{bucket}/{prefix}"

    def put_folder(self, prefix: str, folder: Path, bucket: str = BUCKET) -> str:
        files = {p.relative_to(folder).as_posix(): p.read_bytes()
                 for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip
        return self.put(prefix, files, bucket)

    def files(self, prefix: str, bucket: str = BUCKET) -> dict[str, bytes]:
        """Every object under ``prefix`` by its key relative to it, with its bytes."""
        out = {}
        pages = self.admin.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix.rstrip("/") + "/"
        )
        for page in pages:
            for item in page.get("Contents", []):
                body = self.admin.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
                out[item["Key"][len(prefix.rstrip("/")) + 1 :]] = body
        return out

    def keys_under(self, prefix: str = "", bucket: str = BUCKET) -> list[str]:
        """The keys of the objects under ``prefix``, but for the zero-byte folder markers
        (``KEY/``) that pyarrow leaves where it deletes, as a console makes for a folder."""
        found = self.admin.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
        return sorted(
            item["Key"] for item in found if not (item["Key"].endswith("/") and not item["Size"])
        )


def _users(url: str) -> dict[str, tuple[str, str]]:
    import boto3

    iam = boto3.client(
        "iam", endpoint_url=url, region_name=REGION,
        aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap",
    )  # fmt: skip
    keys = {}
    for user, actions in (("admin", ["*"]), ("reader", _READ)):
        iam.create_user(UserName=user)
        allow = {"Effect": "Allow", "Action": actions, "Resource": "*"}
        policy = {"Version": "2012-10-17", "Statement": [allow]}
        iam.put_user_policy(UserName=user, PolicyName="p", PolicyDocument=json.dumps(policy))
        made = iam.create_access_key(UserName=user)["AccessKey"]
        keys[user] = (made["AccessKeyId"], made["SecretAccessKey"])
    return keys


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    """The server, with the bucket ``data`` made and access control on, for a module's tests
    (each test writes under prefixes of its own)."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"

    def moto_api(path: str, data: bytes) -> None:
        request = urllib.request.Request(
            f"{url}/moto-api/{path}", data=data, method="POST",
            headers={"Content-Type": "application/octet-stream"},
        )  # fmt: skip
        urllib.request.urlopen(request, timeout=10).close()

    try:
        # moto's state is the process's: what another module's server made is forgotten.
        moto_api("reset-auth", b"inf")
        moto_api("reset", b"")
        keys = _users(url)
        admin = boto3.client(
            "s3", endpoint_url=url, region_name=REGION,
            aws_access_key_id=keys["admin"][0], aws_secret_access_key=keys["admin"][1],
        )  # fmt: skip
        admin.create_bucket(Bucket=BUCKET)
        moto_api("reset-auth", b"0")  # from here on, every request is authenticated and authorised
        yield S3Server(url, keys, admin)
    finally:
        moto_api("reset-auth", b"inf")
        server.stop()
