import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { sigV4Problem, type SigV4Credentials } from "./sigv4";
import type { Behaviour } from "./webhook-receiver";

/** Test credentials of a pretend S3 account: the receiver checks presigned URLs against them. */
export const S3_CREDENTIALS: SigV4Credentials = { accessKeyId: "AKIAPRESSROOMTEST01", secretAccessKey: "pressroom/test/secret/key/0123456789abcd" };

/** The bucket every destination test writes to, path-style on the receiver (https://127.0.0.1/<bucket>/<key>). */
export const BUCKET = "pressroom-out";

/** A real presigned S3 PutObject URL for `key`, made by the AWS SDK's presigner, pointing at the local receiver. */
export function presignedPut(key: string, expiresIn = 900): Promise<string> {
  const s3 = new S3Client({
    region: "eu-west-1",
    endpoint: "https://127.0.0.1",
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
    // A presigned PUT of a body the SDK does not see: no checksum of it in the URL.
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  return getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: key }), { expiresIn });
}

/** The URL with its signature's last hex digit changed: what S3 answers 403 SignatureDoesNotMatch to. */
export function tampered(url: string): string {
  return url.replace(/(X-Amz-Signature=[0-9a-f]{63})([0-9a-f])/, (_, head: string, last: string) => `${head}${last === "0" ? "1" : "0"}`);
}

/**
 * An S3 endpoint's answer to a PUT: 403 when its SigV4 signature does not hold (checked as S3 does,
 * see sigv4.ts), else what `then` answers (default 200), like S3's own.
 */
export function s3Endpoint(then: Behaviour = () => ({ status: 200 })): Behaviour {
  return (n, request) => {
    if (request.method !== "PUT") return { status: 405 };
    const problem = sigV4Problem(request, S3_CREDENTIALS);
    if (problem)
      return {
        status: 403,
        headers: { "content-type": "application/xml" },
        body: `<Error><Code>SignatureDoesNotMatch</Code><Message>${problem}</Message></Error>`,
      };
    return then(n, request);
  };
}
