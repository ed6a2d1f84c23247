import { randomBase64url } from '../../random.js';
import type { VerifierDeps } from '../deps.js';
import { walletUriFor } from '../requestObject.js';
import type { Device, VerificationRecord } from '../record.js';
import type { CreatedRequest, CreateRequestInput } from '../types.js';
import { annexCDocRequests } from '../annexC.js';
import { newAnnexCKey, newEncryptionKey } from './encryption.js';

const REQUEST_ID = /^[A-Za-z0-9._~-]{1,200}$/;

/**
 * A new request (D10): its record (nonce, state, the encryption key of `direct_post.jwt`) and a reference
 * per link, the cross-device one always, the same-device one with a returnUri. Bad input is the caller's
 * mistake: a TypeError.
 */
export async function createRequest(deps: VerifierDeps, input: CreateRequestInput): Promise<CreatedRequest> {
  checkInput(deps, input);
  const { responseMode, clientId } = deps.clientIdentity;
  const createdAt = Math.floor(Date.now() / 1000);
  const record: VerificationRecord = {
    requestId: input.requestId,
    credentialTypes: [...(input.credentialTypes ?? [])],
    ...(input.identity ? { identity: input.identity } : {}),
    ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
    nonce: randomBase64url(32),
    state: randomBase64url(32),
    responseMode,
    ...(responseMode === 'direct_post.jwt' ? { encryptionKey: await newEncryptionKey() } : {}),
    ...(input.returnUri !== undefined ? { returnUri: input.returnUri } : {}),
    createdAt,
    expiresAt: createdAt + deps.requestLifetime,
    ...(input.external ? { external: true } : {}),
    ...(input.trace ? { trace: input.trace } : {}),
  };
  // ISO/IEC 18013-7 Annex C is offered when every credential asked for has an mdoc form
  if (annexCDocRequests(deps.expectationsFor(record).query)) record.annexC = await newAnnexCKey();
  const references: Partial<Record<Device, string>> = {
    cross: randomBase64url(32),
    ...(input.returnUri !== undefined ? { same: randomBase64url(32) } : {}),
  };
  await deps.requests.create(record, references);
  return {
    walletUri: walletUriFor(clientId, `${deps.requestUriBase}${references.cross}`),
    ...(references.same ? { sameDeviceUri: walletUriFor(clientId, `${deps.requestUriBase}${references.same}`) } : {}),
    expiresAt: record.expiresAt,
  };
}

function checkInput(deps: Pick<VerifierDeps, 'identity' | 'credentialTypes'>, input: CreateRequestInput): void {
  if (!REQUEST_ID.test(input.requestId))
    throw new TypeError('requestId must be 1-200 letters, digits, ".", "_", "~" or "-"');
  const credentialTypes = input.credentialTypes ?? [];
  if (input.identity) {
    if (!deps.identity) throw new TypeError('identity requests are not configured (identity.VerifiedIdentity)');
    return;
  }
  if (credentialTypes.length === 0) throw new TypeError('at least one credential type must be requested');
  if (new Set(credentialTypes).size !== credentialTypes.length)
    throw new TypeError('a credential type is requested twice');
  for (const name of credentialTypes)
    if (!deps.credentialTypes.has(name)) throw new TypeError(`unknown credential type ${name}`);
}
