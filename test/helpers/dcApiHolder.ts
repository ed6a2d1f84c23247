import type { X509Certificate } from 'node:crypto';
import { createOpenid4vpAuthorizationResponse, resolveOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import {
  encryptedAnswerFor,
  HOLDER_WALLET_METADATA,
  walletCallbacks,
  type ResolvedRequest,
} from './openid4vpHolder.js';

/** One entry of `navigator.credentials.get({ digital: { requests } })`. */
export interface DigitalRequest {
  protocol: string;
  data: Record<string, unknown>;
}

/** What `navigator.credentials.get` resolves to: the DigitalCredential's protocol and data. */
export interface DigitalAnswer {
  protocol: string;
  data: Record<string, unknown>;
}

/**
 * An independent holder answering through the Digital Credentials API (OpenID4VP 1.0 Appendix A) on
 * @openid4vc/openid4vp, not the service's code: the library resolves the request entry of `protocol` for
 * the `origin` the platform asserts (its own `expected_origins` and client identifier checks run) and
 * builds the response, encrypted when the request says `dc_api.jwt`. `answer` builds the vp_token from the
 * resolved request and the origin.
 */
export async function holderAnswersDcApi(
  requests: DigitalRequest[],
  o: {
    protocol: string;
    origin: string;
    trust: X509Certificate;
    answer: (request: ResolvedRequest) => Promise<Record<string, string[]>>;
  },
): Promise<DigitalAnswer> {
  const entry = requests.find((r) => r.protocol === o.protocol);
  if (!entry) throw new Error(`no ${o.protocol} request among ${requests.map((r) => r.protocol).join(', ')}`);
  const callbacks = walletCallbacks(o.trust);
  const resolved = await resolveOpenid4vpAuthorizationRequest({
    authorizationRequestPayload: entry.data as never,
    origin: o.origin,
    wallet: { metadata: HOLDER_WALLET_METADATA as never },
    callbacks,
  });
  const request = resolved.authorizationRequestPayload as ResolvedRequest;
  const response = await createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload,
    authorizationResponsePayload: { vp_token: await o.answer(request) },
    origin: o.origin,
    jarm: encryptedAnswerFor(request, 'dc_api.jwt'),
    callbacks,
  });
  const data = response.jarm
    ? { response: response.jarm.responseJwt }
    : (response.authorizationResponsePayload as Record<string, unknown>);
  return { protocol: o.protocol, data };
}
