import { describe, expect, it } from 'vitest';
import { appendToForm, parseForm } from '../../../src/http/formBody.js';
import { nonceSecretFrom } from '../../../src/issuance/nonceSecret.js';

describe('the token edge\'s view of a form body', () => {
  it('adds the wallet client id without re-encoding what the wallet sent', () => {
    const body = Buffer.from('grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code&tx_code=0042');
    const out = appendToForm(body, { client_id: 'wallet' });
    expect(out.toString()).toBe(`${body.toString()}&client_id=wallet`);
    expect(parseForm(out)).toMatchObject({ tx_code: '0042', client_id: 'wallet' });
  });

  it('adds to an empty body', () => {
    expect(appendToForm(Buffer.alloc(0), { client_id: 'wallet' }).toString()).toBe('client_id=wallet');
  });

  it('sees duplicated parameters as arrays, as the provider does', () => {
    expect(parseForm(Buffer.from('tx_code=1&tx_code=2')).tx_code).toEqual(['1', '2']);
  });
});

describe('c_nonce secret', () => {
  it('is the same on every instance sharing the cookie keys, and 32 bytes long', () => {
    expect(nonceSecretFrom(['k1', 'k0']).equals(nonceSecretFrom(['k1', 'k0']))).toBe(true);
    expect(nonceSecretFrom(['k1'])).toHaveLength(32);
    expect(nonceSecretFrom(['k1']).equals(nonceSecretFrom(['k2']))).toBe(false);
  });
});
