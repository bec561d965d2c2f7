#!/usr/bin/env bash
# Creates BUCKET on an S3-compatible server and uploads FILES as KEY_PREFIX/NAME, signed with
# curl's own SigV4 (the AWS_* variables as pipeline reads them). For the README's S3 example
# and the S3 benchmark; real deployments use their own tools.
# Usage: Benchmarks/s3-upload.sh BUCKET KEY_PREFIX FILE...
set -euo pipefail
bucket=$1 prefix=$2; shift 2
endpoint=${AWS_ENDPOINT_URL_S3:-${AWS_ENDPOINT_URL:?set AWS_ENDPOINT_URL_S3}}
region=${AWS_REGION:-us-east-1}
sign=(--aws-sigv4 "aws:amz:$region:s3" -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -sS -f -o /dev/null)
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
curl "${sign[@]}" -X PUT -H "x-amz-content-sha256: $empty" "$endpoint/$bucket" || true # may exist already
for file in "$@"; do
  curl "${sign[@]}" -X PUT -H "x-amz-content-sha256: $(sha256sum "$file" | cut -c1-64)" \
    -H "Content-Type: application/octet-stream" --data-binary "@$file" "$endpoint/$bucket/$prefix/$(basename "$file")"
done
