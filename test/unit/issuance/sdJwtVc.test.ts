import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { credentialConfigurationFor, vctFor } from '../../../src/issuance/credentialConfigurations.js';
import { publicJwk, SdJwtVcSigner } from '../../../src/issuance/sdJwtVc.js';
import { verifySdJwtVcIndependently } from '../../helpers/sdjwt.js';
import { keyPair } from '../../helpers/keys.js';

describe('the SD-JWT VC a holder receives', () => {
  it('verifies on its own, every attribute selectively disclosable, bound to the holder key', async () => {
    const { privateJwk, publicJwk: issuerPublic } = await keyPair('k1', { kidOnly: true });
    const holder = (await keyPair()).privateJwk;
    const attributes = { FirstName: 'Ada', Age: 36, Member: true };
    const credential = await new SdJwtVcSigner(privateJwk).sign({
      issuer: 'https://vc.example.com/wallet',
      vct: 'https://vc.example.com/types/EmployeeBadge',
      attributes,
      holderJwk: holder,
      expiresAt: 1_900_000_000,
    });

    const verified = await verifySdJwtVcIndependently(credential, { keys: [issuerPublic] });
    expect(verified.header).toEqual({ typ: 'dc+sd-jwt', alg: 'ES256', kid: 'k1' });
    expect(verified.payload).toMatchObject({
      iss: 'https://vc.example.com/wallet',
      vct: 'https://vc.example.com/types/EmployeeBadge',
      exp: 1_900_000_000,
      _sd_alg: 'sha-256',
    });
    expect(verified.payload._sd).toHaveLength(3);
    expect(verified.disclosures).toBe(3);
    expect(verified.claims).toMatchObject(attributes);
    const cnf = verified.payload.cnf as { jwk: Record<string, unknown> };
    expect(cnf.jwk).not.toHaveProperty('d'); // never the private part, even when handed one
    expect(await calculateJwkThumbprint(cnf.jwk)).toBe(await calculateJwkThumbprint(publicJwk(holder)));
  });

  it('issue 49: carries vct#integrity in the signed payload (never a disclosure) for a vct whose type metadata we serve', async () => {
    const { privateJwk, publicJwk: issuerPublic } = await keyPair('k1', { kidOnly: true });
    const holder = (await keyPair()).publicJwk;
    const ours = 'https://vc.example.com/types/EmployeeBadge';
    const signer = new SdJwtVcSigner(privateJwk, {
      integrityOf: (vct) => (vct === ours ? 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' : undefined),
    });
    const input = { issuer: 'https://i', attributes: { A: 1 }, holderJwk: holder, expiresAt: 1_900_000_000 };
    const verified = await verifySdJwtVcIndependently(await signer.sign({ ...input, vct: ours }), {
      keys: [issuerPublic],
    });
    expect(verified.payload['vct#integrity']).toBe('sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
    expect(verified.disclosures).toBe(1);
    const other = await verifySdJwtVcIndependently(await signer.sign({ ...input, vct: 'urn:eudi:pid:1' }), {
      keys: [issuerPublic],
    });
    expect(other.payload).not.toHaveProperty('vct#integrity');
  });

  it("salts every disclosure with 128 random bits, base64url (SD-JWT's salt entropy recommendation), never twice", async () => {
    const { privateJwk } = await keyPair('k1', { kidOnly: true });
    const holder = (await keyPair()).publicJwk;
    const signer = new SdJwtVcSigner(privateJwk);
    const salts: string[] = [];
    for (let i = 0; i < 200; i++) {
      const credential = await signer.sign({
        issuer: 'https://i',
        vct: 'https://t',
        attributes: { A: 1, B: 'b', C: true },
        holderJwk: holder,
        expiresAt: 1_900_000_000,
      });
      const disclosures = credential.split('~').slice(1).filter(Boolean);
      expect(disclosures).toHaveLength(3);
      for (const d of disclosures)
        salts.push((JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as [string])[0]);
    }
    for (const salt of salts) {
      expect(salt).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(salt, 'base64url')).toHaveLength(16);
    }
    expect(new Set(salts).size).toBe(salts.length);
  });

  it('every signature verifies (ES256 in JWS form, whatever the lengths of r and s)', async () => {
    const { privateJwk, publicJwk: issuerPublic } = await keyPair('k1', { kidOnly: true });
    const holder = (await keyPair()).publicJwk;
    const signer = new SdJwtVcSigner(privateJwk);
    const key = await importJWK(issuerPublic, 'ES256');
    for (let i = 0; i < 300; i++) {
      const credential = await signer.sign({
        issuer: 'https://i',
        vct: 'https://t',
        attributes: { A: i },
        holderJwk: holder,
        expiresAt: 1_900_000_000,
      });
      const jws = credential.split('~')[0];
      expect(Buffer.from(jws.split('.')[2], 'base64url')).toHaveLength(64);
      await compactVerify(jws, key); // throws on a bad signature
    }
  });

  it('does not verify with another issuer key', async () => {
    const { privateJwk } = await keyPair('k1', { kidOnly: true });
    const { publicJwk: other } = await keyPair('k1', { kidOnly: true });
    const holder = (await keyPair()).publicJwk;
    const credential = await new SdJwtVcSigner(privateJwk).sign({
      issuer: 'https://i',
      vct: 'https://t',
      attributes: { A: 1 },
      holderJwk: holder,
      expiresAt: 1_900_000_000,
    });
    await expect(verifySdJwtVcIndependently(credential, { keys: [other] })).rejects.toThrow();
  });

  it('needs an ES256 private key with a kid', async () => {
    const { privateJwk, publicJwk: pub } = await keyPair('k1', { kidOnly: true });
    expect(() => new SdJwtVcSigner({ ...privateJwk, kid: undefined })).toThrow('kid');
    expect(() => new SdJwtVcSigner(pub)).toThrow('private ES256');
  });
});

describe('credential configurations in the issuer metadata', () => {
  const type = {
    name: 'EmployeeBadge',
    validity: 'P365D',
    attributes: {
      FirstName: { type: 'string', required: true },
      Photo: { type: 'image', required: false, label: 'Photo' },
    },
  } satisfies CredentialType;

  it('default the vct to {base_url}/types/<name>', () => {
    expect(vctFor(type, 'https://vc.example.com')).toBe('https://vc.example.com/types/EmployeeBadge');
    expect(vctFor({ ...type, vct: 'https://types.example/badge' }, 'https://vc.example.com')).toBe(
      'https://types.example/badge',
    );
  });

  it('describe each attribute for display', () => {
    expect(credentialConfigurationFor(type, 'https://vc.example.com').credential_metadata.claims).toEqual([
      { path: ['FirstName'], mandatory: true, display: [{ name: 'FirstName', locale: 'en' }] },
      { path: ['Photo'], mandatory: false, display: [{ name: 'Photo', locale: 'en' }] },
    ]);
  });
});
