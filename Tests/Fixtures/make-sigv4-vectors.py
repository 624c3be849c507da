"""Writes Tests/Fixtures/sigv4-vectors.json: S3 GET requests signed with AWS Signature V4 by
botocore (S3SigV4Auth), independently of Aspect's code, at a fixed time. Run through
Tests/Fixtures/make-sigv4-vectors.sh, which makes a throwaway venv with botocore."""
import datetime, json, pathlib, sys
from unittest import mock
from urllib.parse import quote
import botocore
from botocore import auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AT = datetime.datetime(2026, 12, 3, 10, 4, 5, tzinfo=datetime.timezone.utc)
CASES = [
    dict(endpoint="http://127.0.0.1:9000", pathStyle=True, bucket="images", key="photos/cat.jpg",
         region="us-east-1", accessKeyId="AKIDEXAMPLE", secretAccessKey="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
    dict(endpoint="https://minio.example:9000", pathStyle=True, bucket="b", key="a dir/ein Bild ü+€.jpg",
         region="eu-central-1", accessKeyId="AKID2", secretAccessKey="secret/with+signs=="),
    dict(endpoint="", pathStyle=False, bucket="my-bucket", key="prefix/x~y_z-1.2.webp",
         region="eu-west-3", accessKeyId="ASIAEXAMPLE", secretAccessKey="s3cr3t",
         sessionToken="FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN+/="),
    dict(endpoint="https://acct.r2.cloudflarestorage.com", pathStyle=True, bucket="r2-bucket",
         key="deep/a%b&c=d?e#f.png", region="auto", accessKeyId="R2KEY", secretAccessKey="R2SECRET"),
]

vectors = []
for c in CASES:
    encoded = quote(c["key"], safe="/~")
    if c["pathStyle"]:
        url = f"{c['endpoint']}/{c['bucket']}/{encoded}"
    else:
        url = f"https://{c['bucket']}.s3.{c['region']}.amazonaws.com/{encoded}"
    request = AWSRequest(method="GET", url=url)
    credentials = Credentials(c["accessKeyId"], c["secretAccessKey"], c.get("sessionToken"))
    with mock.patch.object(auth, "get_current_datetime", return_value=AT):
        auth.S3SigV4Auth(credentials, "s3", c["region"]).add_auth(request)
    headers = {k: v for k, v in request.headers.items()}
    vectors.append(dict(c, url=url, amzDate=headers["X-Amz-Date"],
                        contentSHA256=headers["X-Amz-Content-SHA256"],
                        authorization=headers["Authorization"]))

out = pathlib.Path(__file__).resolve().parent / "sigv4-vectors.json"
out.write_text(json.dumps({
    "about": "S3 GET requests signed with AWS Signature V4 by botocore %s (S3SigV4Auth) at %s, "
             "independently of Aspect's code; made by Tests/Fixtures/make-sigv4-vectors.sh." % (botocore.__version__, AT.isoformat()),
    "vectors": vectors}, indent=2, ensure_ascii=False) + "\n")
print(f"wrote {len(vectors)} vectors to {out}", file=sys.stderr)
