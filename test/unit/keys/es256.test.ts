import { generateKeyPairSync } from 'node:crypto';
import { compactVerify, exportJWK, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { signEs256 } from '../../../src/keys/es256.js';

describe('signEs256: an ES256 JWS signature (RFC 7518 §3.4)', () => {
  it('is r || s, 64 bytes, and verifies with jose', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = await importJWK(await exportJWK(publicKey), 'ES256');
    const header = Buffer.from(JSON.stringify({ alg: 'ES256' })).toString('base64url');
    for (let i = 0; i < 200; i++) {
      const input = `${header}.${Buffer.from(`payload ${i}`).toString('base64url')}`;
      const signature = signEs256(privateKey, input);
      expect(Buffer.from(signature, 'base64url')).toHaveLength(64);
      await expect(compactVerify(`${input}.${signature}`, key)).resolves.toBeDefined();
    }
  });
});
