import { describe, expect, it } from 'vitest';
import {
  checkPin,
  parseOfferReference,
  PRE_AUTHORIZED_CODE_GRANT,
  readPreAuthorizedOffer,
  resolveOffer,
} from '../../../src/wallet/offer.js';
import {
  appendedWellKnownUrl,
  authorizationServerFor,
  wellKnownUrl,
  type CredentialIssuerMetadata,
} from '../../../src/wallet/metadata.js';

const offer = {
  credential_issuer: 'https://vc.example.com/wallet',
  credential_configuration_ids: ['EmployeeBadge'],
  grants: {
    [PRE_AUTHORIZED_CODE_GRANT]: {
      'pre-authorized_code': 'code-123',
      tx_code: { input_mode: 'numeric', length: 4, description: 'PIN from HR' },
    },
  },
};
const byValue = (o: unknown) => `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(o))}`;

describe('reading a credential offer link', () => {
  it('reads an offer passed by value', () => {
    expect(parseOfferReference(byValue(offer))).toEqual({ offer });
  });

  it('reads an offer passed by reference', () => {
    const link = `openid-credential-offer://?credential_offer_uri=${encodeURIComponent('https://vc.example.com/offers/1')}`;
    expect(parseOfferReference(link)).toEqual({ offerUri: 'https://vc.example.com/offers/1' });
  });

  it('accepts the same query on an https link (same-device button)', () => {
    expect(
      parseOfferReference(`https://wallet.example/offer?credential_offer=${encodeURIComponent(JSON.stringify(offer))}`),
    ).toEqual({ offer });
  });

  it.each([
    ['not a URL', 'hello'],
    ['neither parameter', 'openid-credential-offer://?foo=bar'],
    ['both parameters', `openid-credential-offer://?credential_offer=%7B%7D&credential_offer_uri=https%3A%2F%2Fx`],
    ['broken JSON', 'openid-credential-offer://?credential_offer=%7Bnope'],
    [
      'a non-http reference',
      `openid-credential-offer://?credential_offer_uri=${encodeURIComponent('file:///etc/passwd')}`,
    ],
  ])('refuses %s with a one-line reason', (_name, link) => {
    expect(() => parseOfferReference(link)).toThrow(/^[^\n]+$/);
  });

  it('keeps what the pre-authorized code flow needs', () => {
    expect(readPreAuthorizedOffer(offer)).toEqual({
      credentialIssuer: 'https://vc.example.com/wallet',
      credentialConfigurationIds: ['EmployeeBadge'],
      preAuthorizedCode: 'code-123',
      txCode: { input_mode: 'numeric', length: 4, description: 'PIN from HR' },
    });
  });

  it('says so when the offer only has the authorization code flow', () => {
    expect(() => readPreAuthorizedOffer({ ...offer, grants: { authorization_code: { issuer_state: 'x' } } })).toThrow(
      'pre-authorized code flow',
    );
  });

  it.each([
    ['no issuer', { ...offer, credential_issuer: undefined }, 'credential_issuer'],
    ['an issuer that is not a URL', { ...offer, credential_issuer: 'vc.example.com' }, 'credential_issuer'],
    ['no configuration ids', { ...offer, credential_configuration_ids: [] }, 'credential_configuration_ids'],
    [
      'an empty code',
      { ...offer, grants: { [PRE_AUTHORIZED_CODE_GRANT]: { 'pre-authorized_code': '' } } },
      'pre-authorized_code',
    ],
    ['an array', [offer], 'JSON object'],
  ])('refuses an offer with %s', (_name, value, message) => {
    expect(() => readPreAuthorizedOffer(value)).toThrow(message);
  });

  it('fetches an offer passed by reference', async () => {
    const fetched: string[] = [];
    const fakeFetch = (async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify(offer), { headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof fetch;
    const resolved = await resolveOffer(
      `openid-credential-offer://?credential_offer_uri=${encodeURIComponent('https://vc.example.com/offers/1')}`,
      fakeFetch,
    );
    expect(fetched).toEqual(['https://vc.example.com/offers/1']);
    expect(resolved.preAuthorizedCode).toBe('code-123');
  });
});

describe('checking the PIN before spending an attempt on it', () => {
  const txCode = { input_mode: 'numeric' as const, length: 4 };
  it('accepts a PIN of the announced length', () => expect(() => checkPin(txCode, '1234')).not.toThrow());
  it('asks for the PIN when the offer needs one', () => expect(() => checkPin(txCode, undefined)).toThrow('--pin'));
  it('refuses letters in a numeric PIN', () => expect(() => checkPin(txCode, '12a4')).toThrow('digits only'));
  it('refuses a PIN of another length', () => expect(() => checkPin(txCode, '12345')).toThrow('4 digits'));
  it('refuses a PIN the offer does not ask for', () =>
    expect(() => checkPin(undefined, '1234')).toThrow('not protected'));
  it('needs nothing for an offer without PIN', () => expect(() => checkPin(undefined, undefined)).not.toThrow());
});

describe('where the wallet looks for metadata', () => {
  it('puts the well-known segment between host and path first (RFC 8414 §3.1)', () => {
    expect(wellKnownUrl('https://vc.example.com/wallet', 'openid-credential-issuer')).toBe(
      'https://vc.example.com/.well-known/openid-credential-issuer/wallet',
    );
    expect(wellKnownUrl('https://vc.example.com', 'jwt-vc-issuer')).toBe(
      'https://vc.example.com/.well-known/jwt-vc-issuer',
    );
  });

  it('falls back to the segment appended to the identifier', () => {
    expect(appendedWellKnownUrl('https://vc.example.com/wallet', 'openid-credential-issuer')).toBe(
      'https://vc.example.com/wallet/.well-known/openid-credential-issuer',
    );
  });

  it('asks the credential issuer itself when it names no authorization server', () => {
    const metadata = { credential_issuer: 'https://vc.example.com/wallet' } as CredentialIssuerMetadata;
    expect(authorizationServerFor(metadata)).toBe('https://vc.example.com/wallet');
    expect(authorizationServerFor({ ...metadata, authorization_servers: ['https://as.example'] })).toBe(
      'https://as.example',
    );
    expect(() =>
      authorizationServerFor({ ...metadata, authorization_servers: ['https://as.example'] }, 'https://evil.example'),
    ).toThrow('does not list');
  });
});
