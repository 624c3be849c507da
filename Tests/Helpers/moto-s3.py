"""Test helper: an account, a bucket and objects on a local moto S3 server whose
authentication is on (moto checks every request's SigV4 signature once its first
INITIAL_NO_AUTH_ACTION_COUNT requests are spent; `setup` spends exactly three).

  moto-s3.py setup ENDPOINT BUCKET          -> {"accessKeyId": ..., "secretAccessKey": ...}
  moto-s3.py put ENDPOINT BUCKET KEY FILE ACCESS_KEY_ID SECRET_ACCESS_KEY
"""
import json
import sys

import boto3

REGION = "us-east-1"


def client(service, endpoint, key="anonymous", secret="anonymous"):
    return boto3.client(service, endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=key, aws_secret_access_key=secret)


def setup(endpoint, bucket):
    iam = client("iam", endpoint)
    iam.create_user(UserName="aspect")
    key = iam.create_access_key(UserName="aspect")["AccessKey"]
    iam.put_user_policy(UserName="aspect", PolicyName="all", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    s3 = client("s3", endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    s3.create_bucket(Bucket=bucket)
    print(json.dumps({"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}))


def put(endpoint, bucket, key, path, access, secret):
    s3 = client("s3", endpoint, access, secret)
    with open(path, "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"setup": setup, "put": put}[command](*args)
