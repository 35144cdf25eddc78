import type { identityV1 } from "@pressroom/contracts";
import { AppError, unary } from "@pressroom/platform";
import { DEMO_KEY_ID } from "@pressroom/domain";
import type { IdentityDeps } from "../deps";
import type { KeyRow } from "../keys/keys.repository";
import { createSession, deleteSession, findSession, type SessionRow } from "./sessions.repository";

export const sessionInvalid = () =>
  new AppError("AUTH_INVALID", "session expired, signed out, or its key was revoked", "Sign in again at /console (POST /console/session with your API key).");

/** The key a live session stands for; AUTH_INVALID otherwise. */
export async function sessionKey(deps: IdentityDeps, token: string): Promise<KeyRow> {
  const session = await findSession(deps.db, token);
  if (!session) throw sessionInvalid();
  return session.key;
}

function toSession(row: SessionRow, record: (key: KeyRow) => identityV1.KeyRecord): identityV1.Session {
  return {
    key: record(row.key),
    keyPrefix: row.keyPrefix,
    csrfToken: row.csrfToken,
    expiresAt: row.expiresAt.toISOString(),
    // Everyone holds the public demo key: its console looks, and changes nothing.
    readOnly: row.key.keyId === DEMO_KEY_ID,
  };
}

/**
 * The console's sessions: a key exchanged for a session token (the browser keeps only that, in an
 * HttpOnly cookie), resolved at each request, ended at sign-out, and dead as soon as the key is
 * revoked (every lookup joins the key).
 */
export function sessionHandlers(
  deps: IdentityDeps,
  authenticKey: (apiKey: string) => Promise<KeyRow>,
  record: (key: KeyRow) => identityV1.KeyRecord,
): Pick<identityV1.IdentityServiceServer, "createSession" | "authenticateSession" | "deleteSession"> {
  const { logger } = deps;
  return {
    createSession: unary(async (req: identityV1.CreateSessionRequest) => {
      const key = await authenticKey(req.apiKey);
      const { token } = await createSession(deps.db, key.keyId);
      const session = await findSession(deps.db, token);
      if (!session) throw sessionInvalid();
      return { sessionToken: token, session: toSession(session, record) };
    }, logger),

    authenticateSession: unary(async (req: identityV1.AuthenticateSessionRequest) => {
      const session = await findSession(deps.db, req.sessionToken);
      if (!session) throw sessionInvalid();
      return { session: toSession(session, record) };
    }, logger),

    deleteSession: unary(async (req: identityV1.DeleteSessionRequest) => {
      await deleteSession(deps.db, req.sessionToken);
      return {};
    }, logger),
  };
}
