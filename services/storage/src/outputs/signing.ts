import { createHmac, timingSafeEqual } from "node:crypto";

/** sig = hex HMAC-SHA256(secret, "<output id>.<exp>"), exp in Unix seconds. */
export function signOutput(secret: string, outputId: string, exp: number): string {
  return createHmac("sha256", secret).update(`${outputId}.${exp}`).digest("hex");
}

export function signedUrl(baseUrl: string, secret: string, outputId: string, exp: number): string {
  const url = new URL(`/v1/outputs/${encodeURIComponent(outputId)}`, baseUrl);
  url.searchParams.set("exp", String(exp));
  url.searchParams.set("sig", signOutput(secret, outputId, exp));
  return url.toString();
}

export type SignatureCheck = "valid" | "invalid" | "expired";

/**
 * Checks a signed URL's parameters in constant time. A signature that does not
 * match (including a tampered exp) is invalid; a matching one past exp is expired.
 */
export function checkSignature(secret: string, outputId: string, exp: string, sig: string, nowSeconds: number): SignatureCheck {
  if (!/^\d{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return "invalid";
  const expected = Buffer.from(signOutput(secret, outputId, Number(exp)), "hex");
  const given = Buffer.from(sig, "hex");
  if (!timingSafeEqual(expected, given)) return "invalid";
  return Number(exp) < nowSeconds ? "expired" : "valid";
}
