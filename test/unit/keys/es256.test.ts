import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { es256Jws } from '../../../src/keys/es256.js';

describe('es256Jws: a DER ECDSA P-256 signature in JWS form (RFC 7518 §3.4)', () => {
  it('gives r || s, 64 bytes, that verify, also when r or s is shorter than 32 bytes or carries a leading zero', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const data = Buffer.from('header.payload');
    const seen = { short: 0, padded: 0 };
    for (let i = 0; i < 3000; i++) {
      const der = sign('sha256', data, privateKey);
      for (let at = 2, half = 0; half < 2; half++, at += 2 + der[at + 1]) {
        if (der[at + 1] < 32) seen.short++;
        if (der[at + 1] === 33) seen.padded++;
      }
      const jws = es256Jws(der);
      expect(jws).toHaveLength(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jws)).toBe(true);
    }
    // both unusual lengths occurred (a shorter integer about once in 128 signatures)
    expect(seen.short).toBeGreaterThan(0);
    expect(seen.padded).toBeGreaterThan(0);
  });

  it('left-pads short integers: r = 1, s = 0x80 (with its leading zero)', () => {
    const der = Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80]);
    const jws = es256Jws(der);
    expect(jws[31]).toBe(1);
    expect(jws[63]).toBe(0x80);
    expect(jws.subarray(0, 31).every((b) => b === 0) && jws.subarray(32, 63).every((b) => b === 0)).toBe(true);
  });

  it('refuses what is not such a signature', () => {
    const bad = [
      Buffer.alloc(0),
      Buffer.from([0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), // not a SEQUENCE
      Buffer.from([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), // length says one byte more
      Buffer.from([0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01]), // not an INTEGER
      Buffer.from([0x30, 0x08, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x02, 0x00]), // trailing bytes
      Buffer.concat([Buffer.from([0x30, 0x26, 0x02, 0x21, 0x01]), Buffer.alloc(32, 0xff), Buffer.from([0x02, 0x01, 0x01])]), // 33 bytes without a leading zero
      Buffer.concat([Buffer.from([0x30, 0x27, 0x02, 0x22]), Buffer.alloc(34), Buffer.from([0x02, 0x01, 0x01])]), // 34 bytes
    ];
    for (const der of bad) expect(() => es256Jws(der), der.toString('hex')).toThrow(/ES256/);
  });
});
