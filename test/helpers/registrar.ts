import { createPrivateKey, sign } from 'node:crypto';
import { makeCert, type TestCert } from './pki.js';

/**
 * A test registrar (a provider of registration certificates, ETSI TS 119 475): a root and a signing leaf
 * made with @peculiar/x509, and registration certificates signed with node:crypto, not with jose, which the
 * service verifies them with.
 */
export interface TestRegistrar {
  root: TestCert;
  signer: TestCert;
  /** a registration certificate (rc-wrp+jwt) with `claims`; `header` adds to or replaces the header */
  certificate(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function makeRegistrar(name = 'Test Registrar'): Promise<TestRegistrar> {
  const root = await makeCert({ subject: `CN=${name} Root, C=EU`, ca: true });
  const signer = await makeCert({ subject: `CN=${name}, C=EU`, issuer: root });
  const key = createPrivateKey({ key: signer.privateJwk as never, format: 'jwk' });
  return {
    root,
    signer,
    certificate(claims, header = {}) {
      const input = `${b64url({ alg: 'ES256', typ: 'rc-wrp+jwt', x5c: [signer.b64], ...header })}.${b64url(claims)}`;
      const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    },
  };
}

/** ETSI TS 119 475 `credentials` registering `claims` of one SD-JWT VC type. */
export const sdJwtRegistered = (vct: string, claims: string[]) => ({
  format: 'dc+sd-jwt',
  meta: { vct_values: [vct] },
  claim: claims.map((name) => ({ path: [name] })),
});

/** A registration certificate's claims for `sub`, valid an hour from now unless `exp` says otherwise. */
export const registrationClaims = (sub: string, credentials: unknown[], extra: Record<string, unknown> = {}) => {
  const now = Math.floor(Date.now() / 1000);
  return { sub, name: `${sub} service`, iat: now - 60, exp: now + 3600, credentials, ...extra };
};
