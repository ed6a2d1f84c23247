import { ENGLISH, say, type Say } from '../../i18n/catalogues.js';
import type { VerifierDeps } from '../deps.js';
import type { VerificationRecord } from '../record.js';

/** Request object references, states and response codes: 256 random bits, base64url. */
export const OPAQUE = /^[A-Za-z0-9_-]{43}$/;

/** Throws RateLimited over a budget (`vpResponse`); the error boundary answers 429. */
export async function withinRateLimits(
  deps: Pick<VerifierDeps, 'rateLimits'>,
  address: string,
  client?: string,
): Promise<void> {
  await deps.rateLimits?.consume('vpResponse', { client, address });
}

/** Ends a request for good. `declined`: the wallet answered access_denied (the holder declined), not a refused presentation. */
export async function failed(
  deps: Pick<VerifierDeps, 'requests' | 'onFailed'>,
  record: VerificationRecord,
  message: Say,
  description: string,
  declined = false,
): Promise<void> {
  await deps.requests.failed(record, message, description);
  await deps.onFailed?.(record, { message: ENGLISH.say(message), description, ...(declined ? { declined } : {}) });
}

/** The holder gives up on a request the wallet refused: it ends as the refusal said, once. */
export async function endRefused(deps: Pick<VerifierDeps, 'requests' | 'onFailed'>, requestId: string): Promise<void> {
  const held = await deps.requests.takeRefusal(requestId);
  if (!held) return;
  const { record, status } = held;
  await failed(
    deps,
    record,
    status.say ?? say('status.walletError'),
    status.description ?? 'the wallet answered with an error',
  );
}
