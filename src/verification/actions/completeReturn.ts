import { say } from '../../i18n/catalogues.js';
import type { VerifierDeps } from '../deps.js';
import type { ReturnOutcome } from '../types.js';
import { failed, OPAQUE } from './outcomes.js';

/**
 * Same-device (OpenID4VP 1.0 §8.2): the browser came back with a response code. The request's code
 * completes it; a wrong code for a request that waits for one ends it, and any other is refused.
 */
export async function completeReturn(
  deps: Pick<VerifierDeps, 'requests' | 'onVerified' | 'onFailed'>,
  requestId: string,
  responseCode: string,
): Promise<ReturnOutcome> {
  const redeemed = OPAQUE.test(responseCode) ? await deps.requests.redeem(requestId, responseCode) : undefined;
  if (!redeemed) {
    const record = await deps.requests.find(requestId);
    const status = await deps.requests.status(requestId);
    // a code for a request that is waiting for it, but the wrong one: the code was taken, the request ends
    if (record && status.status === 'returning') {
      await failed(
        deps,
        record,
        say('status.otherWallet'),
        'response_code: not the code the wallet was given for this request',
      );
    }
    return 'refused';
  }
  await deps.onVerified?.(redeemed.record, redeemed.result);
  await deps.requests.done(redeemed.record, redeemed.result);
  return 'completed';
}
