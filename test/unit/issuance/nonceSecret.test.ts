import { describe, expect, it } from 'vitest';
import { nonceSecretFrom } from '../../../src/issuance/nonceSecret.js';

describe('c_nonce secret', () => {
  it('is the same on every instance sharing the secret, and 32 bytes long', () => {
    expect(nonceSecretFrom('k1').equals(nonceSecretFrom('k1'))).toBe(true);
    expect(nonceSecretFrom('k1')).toHaveLength(32);
    expect(nonceSecretFrom('k1').equals(nonceSecretFrom('k2'))).toBe(false);
    expect(nonceSecretFrom('k1', 'DPoP nonce secret').equals(nonceSecretFrom('k1'))).toBe(false);
  });
});
