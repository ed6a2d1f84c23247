import { jsonOrOAuthError, WalletError } from './errors.js';

export const PRE_AUTHORIZED_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

export interface TxCode {
  input_mode?: 'numeric' | 'text';
  length?: number;
  description?: string;
}

/** The parts of a Credential Offer (OpenID4VCI 1.0 §4.1.1) the dev wallet acts on. */
export interface PreAuthorizedOffer {
  credentialIssuer: string;
  credentialConfigurationIds: string[];
  preAuthorizedCode: string;
  txCode?: TxCode;
  authorizationServer?: string;
}

/** Where the offer is: by value (`credential_offer`) or by reference (`credential_offer_uri`), §4.1. */
export type OfferReference = { offer: unknown } | { offerUri: string };

/** Reads an offer link or QR payload (`openid-credential-offer://?...`, or any URL with the same query). */
export function parseOfferReference(link: string): OfferReference {
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    throw new WalletError(
      'not a credential offer: expected a URL such as openid-credential-offer://?credential_offer=...',
    );
  }
  const byValue = url.searchParams.get('credential_offer');
  const byReference = url.searchParams.get('credential_offer_uri');
  if (byValue !== null && byReference !== null) {
    throw new WalletError('a credential offer carries credential_offer or credential_offer_uri, not both');
  }
  if (byValue !== null) {
    try {
      return { offer: JSON.parse(byValue) };
    } catch {
      throw new WalletError('credential_offer is not valid JSON');
    }
  }
  if (byReference !== null) {
    if (!isHttpUrl(byReference)) throw new WalletError('credential_offer_uri must be an http(s) URL');
    return { offerUri: byReference };
  }
  throw new WalletError('not a credential offer: it has neither credential_offer nor credential_offer_uri');
}

/** Validates an offer object and keeps what the pre-authorized code flow needs (§4.1.1). */
export function readPreAuthorizedOffer(offer: unknown): PreAuthorizedOffer {
  if (!isObject(offer)) throw new WalletError('credential offer must be a JSON object');
  const issuer = offer.credential_issuer;
  if (typeof issuer !== 'string' || !isHttpUrl(issuer))
    throw new WalletError('credential offer: credential_issuer must be an http(s) URL');
  const ids = offer.credential_configuration_ids;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id)) {
    throw new WalletError('credential offer: credential_configuration_ids must be a non-empty array of strings');
  }
  const grants = isObject(offer.grants) ? offer.grants : {};
  const grant = grants[PRE_AUTHORIZED_CODE_GRANT];
  if (!isObject(grant)) {
    throw new WalletError(
      'credential offer has no pre-authorized code grant; the dev wallet supports only the pre-authorized code flow',
    );
  }
  const code = grant['pre-authorized_code'];
  if (typeof code !== 'string' || !code)
    throw new WalletError('credential offer: pre-authorized_code must be a non-empty string');
  const txCode = grant.tx_code;
  if (txCode !== undefined && !isObject(txCode)) throw new WalletError('credential offer: tx_code must be an object');
  const authorizationServer = grant.authorization_server;
  return {
    credentialIssuer: issuer,
    credentialConfigurationIds: ids as string[],
    preAuthorizedCode: code,
    ...(txCode ? { txCode: txCode as TxCode } : {}),
    ...(typeof authorizationServer === 'string' ? { authorizationServer } : {}),
  };
}

/** Resolves a link to the offer it carries, fetching it when passed by reference. */
export async function resolveOffer(link: string, fetchImpl: typeof fetch): Promise<PreAuthorizedOffer> {
  const reference = parseOfferReference(link);
  if ('offer' in reference) return readPreAuthorizedOffer(reference.offer);
  const response = await fetchImpl(reference.offerUri, { headers: { accept: 'application/json' } });
  return readPreAuthorizedOffer(await jsonOrOAuthError(response, 'fetching the credential offer'));
}

/** Checks a PIN against what the offer asks for, before spending one of the limited attempts on it. */
export function checkPin(txCode: TxCode | undefined, pin: string | undefined): void {
  if (!txCode) {
    if (pin !== undefined) throw new WalletError('this offer is not protected by a PIN; leave --pin out');
    return;
  }
  const hint = txCode.description ? ` (${txCode.description})` : '';
  if (pin === undefined || pin === '')
    throw new WalletError(`this offer is protected by a PIN: pass it with --pin${hint}`);
  const numeric = (txCode.input_mode ?? 'numeric') === 'numeric';
  if (numeric && !/^\d+$/.test(pin)) throw new WalletError('the PIN must be digits only');
  if (txCode.length !== undefined && pin.length !== txCode.length) {
    throw new WalletError(`the PIN must be ${txCode.length} ${numeric ? 'digits' : 'characters'} long`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
