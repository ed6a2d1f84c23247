import { describe, expect, it } from 'vitest';
import { credentialOffer, credentialOfferUri } from '../../../src/issuance/offerUri.js';
import { parseOfferReference, readPreAuthorizedOffer } from '../../../src/wallet/offer.js';

describe('the credential offer a wallet scans', () => {
  it("carries the issuer, the type and the pre-authorized code with the PIN's shape", () => {
    const offer = credentialOffer({
      credentialIssuer: 'https://vc.example.com/wallet',
      credentialConfigurationId: 'EmployeeBadge',
      preAuthorizedCode: 'abc',
      pinLength: 6,
    });
    expect(offer).toEqual({
      credential_issuer: 'https://vc.example.com/wallet',
      credential_configuration_ids: ['EmployeeBadge'],
      grants: {
        'urn:ietf:params:oauth:grant-type:pre-authorized_code': {
          'pre-authorized_code': 'abc',
          tx_code: { input_mode: 'numeric', length: 6, description: expect.any(String) },
        },
      },
    });
  });

  it('has no tx_code without a PIN', () => {
    const offer = credentialOffer({
      credentialIssuer: 'https://vc.example.com/wallet',
      credentialConfigurationId: 'EmployeeBadge',
      preAuthorizedCode: 'abc',
    });
    expect(offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']).toEqual({
      'pre-authorized_code': 'abc',
    });
  });

  it('is passed by value in an openid-credential-offer:// link that the wallet reads back unchanged', () => {
    const offer = credentialOffer({
      credentialIssuer: 'https://vc.example.com/wallet',
      credentialConfigurationId: 'EmployeeBadge',
      preAuthorizedCode: 'a+b/c=&d',
      pinLength: 4,
    });
    const uri = credentialOfferUri(offer);
    expect(uri.startsWith('openid-credential-offer://?credential_offer=')).toBe(true);
    const reference = parseOfferReference(uri);
    expect(reference).toEqual({ offer });
    expect(readPreAuthorizedOffer(offer).preAuthorizedCode).toBe('a+b/c=&d');
  });
});
