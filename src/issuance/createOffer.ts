import type { CredentialType } from '../config/schema.js';
import type { StoredPin } from '../rules/pinHash.js';
import { randomBase64url } from '../random.js';
import { credentialOfferReferenceUri } from './offerUri.js';
import { offerIdOf, type OfferBook } from './offers.js';

export interface CreateOfferInput {
  /** what the offer is a step of; `onIssued` hands it back as the offer's `stepId` */
  stepId: string;
  /** the relying party whose flow it is, handed back on the offer (metrics, audit) */
  clientId?: string;
  credentialType: string;
  attributes: Record<string, unknown>;
  /** the PIN as a salted hash (src/rules/pinHash.ts): the offer never holds the PIN itself */
  pin?: StoredPin;
  serialNumber: string;
  credentialExpiresAt: Date;
  /** an External Client flow's step (D13), handed back on the offer */
  external?: boolean;
  /** the flow's root span context, kept on the offer for the wallet's requests */
  trace?: string;
}

export interface CreatedOffer {
  offerId: string;
  /** the link for the wallet (QR code, same-device button): the offer by reference */
  offerUri: string;
  /** epoch seconds: until when the wallet can redeem it */
  expiresAt: number;
}

/**
 * Makes the offer: its pre-authorized code (the offer's own bearer value, 256 bits from the CSPRNG) and the
 * offer record, found by the code's hash. The provider's code and grant are minted when a wallet redeems
 * it (`codeFor`), for that wallet's client.
 */
export async function createOffer(
  offers: OfferBook,
  credentialIssuer: string,
  types: Map<string, CredentialType>,
  lifetimes: { offer: number; token: number },
  input: CreateOfferInput,
): Promise<CreatedOffer> {
  const type = types.get(input.credentialType);
  if (!type) throw new TypeError(`unknown credential type ${input.credentialType}`);
  if (Number.isNaN(input.credentialExpiresAt.getTime()))
    throw new TypeError('credentialExpiresAt must be a valid date');
  const preAuthorizedCode = randomBase64url(32);
  const expiresAt = Math.floor(Date.now() / 1000) + lifetimes.offer;
  const offerId = offerIdOf(preAuthorizedCode);
  await offers.create({
    offerId,
    stepId: input.stepId,
    ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
    preAuthorizedCode,
    pin: input.pin,
    credentialType: type.name,
    attributes: input.attributes,
    serialNumber: input.serialNumber,
    credentialExpiresAt: Math.floor(input.credentialExpiresAt.getTime() / 1000),
    redeemBy: expiresAt,
    keptUntil: expiresAt + lifetimes.token,
    ...(input.external ? { external: true } : {}),
    ...(input.trace ? { trace: input.trace } : {}),
  });
  return { offerId, offerUri: credentialOfferReferenceUri(`${credentialIssuer}/offers/${offerId}`), expiresAt };
}
