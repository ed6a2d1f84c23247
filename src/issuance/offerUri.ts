/** OpenID4VCI 1.0 §4.1.1: the grant type of the pre-authorized code flow. */
export const PRE_AUTHORIZED_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

export interface TxCode {
  input_mode: 'numeric';
  length: number;
  description: string;
}

/** A Credential Offer (OpenID4VCI 1.0 §4.1.1) for the pre-authorized code flow. */
export interface CredentialOffer {
  credential_issuer: string;
  credential_configuration_ids: string[];
  grants: {
    [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': string; tx_code?: TxCode };
  };
}

export const TX_CODE_DESCRIPTION = 'Enter the PIN you were given with this offer.';

export function credentialOffer(
  input: {
    credentialIssuer: string;
    preAuthorizedCode: string;
    pinLength?: number;
    /** one configuration, or the configurations of the offer's type (the SD-JWT VC one first) */
  } & ({ credentialConfigurationId: string } | { credentialConfigurationIds: string[] }),
): CredentialOffer {
  const txCode: TxCode | undefined = input.pinLength
    ? { input_mode: 'numeric', length: input.pinLength, description: TX_CODE_DESCRIPTION }
    : undefined;
  return {
    credential_issuer: input.credentialIssuer,
    credential_configuration_ids:
      'credentialConfigurationIds' in input ? input.credentialConfigurationIds : [input.credentialConfigurationId],
    grants: {
      [PRE_AUTHORIZED_CODE_GRANT]: {
        'pre-authorized_code': input.preAuthorizedCode,
        ...(txCode ? { tx_code: txCode } : {}),
      },
    },
  };
}

/** The offer passed by value (OpenID4VCI 1.0 §4.1.2), for a QR code or a same-device link. */
export function credentialOfferUri(offer: CredentialOffer): string {
  return `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(offer))}`;
}

/**
 * The offer passed by reference (OpenID4VCI 1.0 §4.1.3): the link carries only where to fetch it, so the
 * QR code stays small (quicker to draw, easier to scan); the wallet GETs the offer from the issuer.
 */
export function credentialOfferReferenceUri(offerUrl: string): string {
  return `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(offerUrl)}`;
}
