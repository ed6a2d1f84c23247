import { randomUUID } from 'node:crypto';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { decodeJws } from './jws.js';
import { WalletError } from './errors.js';
import type { StoredMdoc, StoredSdJwt } from './walletFile.js';
import { REGISTERED_CLAIMS } from './verifyCredential.js';

/**
 * An SD-JWT VC issued elsewhere, as the wallet keeps it, with the private holder key it is bound to. The
 * credential must be an SD-JWT VC (`typ dc+sd-jwt`) whose `cnf.jwk` is the public part of `holderKey`. Its
 * issuer signature is not checked here: the wallet may not know the issuer's keys; verifiers check it.
 */
export async function importedSdJwt(credential: string, holderKey: JWK): Promise<StoredSdJwt> {
  // RFC 9901 §4: an issued SD-JWT ends with `~`; a lone issuer-signed JWT (no disclosures) is taken as one
  const sdJwt = credential.includes('~') ? credential.trim() : `${credential.trim()}~`;
  if (!sdJwt.endsWith('~'))
    throw new WalletError(
      'the credential ends with a key binding JWT: import the issued credential, not a presentation',
    );
  const issuerJwt = sdJwt.split('~')[0];
  const { header, payload } = decodeJws(issuerJwt, 'not an SD-JWT VC: the credential does not start with a JWT');
  if (header.typ !== 'dc+sd-jwt' && header.typ !== 'vc+sd-jwt')
    throw new WalletError(`credential typ is ${String(header.typ)}, expected dc+sd-jwt`);
  if (typeof payload.iss !== 'string' || typeof payload.vct !== 'string')
    throw new WalletError('the credential has no iss or no vct');
  if (!holderKey.d) throw new WalletError('the holder key must be the private key the credential is bound to');
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...holderPublic } = holderKey;
  const cnf = payload.cnf as { jwk?: JWK } | undefined;
  if (!cnf?.jwk || (await calculateJwkThumbprint(cnf.jwk)) !== (await calculateJwkThumbprint(holderPublic))) {
    throw new WalletError('the credential is not bound (cnf.jwk) to the given holder key');
  }
  let disclosed: Record<string, unknown>;
  try {
    disclosed = (await new SDJwtVcInstance({ hasher: digest }).getClaims(sdJwt)) as Record<string, unknown>;
  } catch (err) {
    throw new WalletError(`the credential's disclosures cannot be read: ${(err as Error).message}`);
  }
  const stored: StoredSdJwt = {
    id: randomUUID(),
    format: 'dc+sd-jwt',
    credential: sdJwt,
    issuer: payload.iss,
    vct: payload.vct,
    receivedAt: new Date().toISOString(),
    holderKey,
    claims: Object.fromEntries(Object.entries(disclosed).filter(([name]) => !REGISTERED_CLAIMS.has(name))),
  };
  return stored;
}

/**
 * An ISO mdoc issued elsewhere (ISO/IEC 18013-5), as the wallet keeps it: its IssuerSigned (base64url CBOR),
 * its doctype and the private P-256 device key its MSO is bound to. The elements are read from IssuerSigned;
 * the issuer signature is not checked here (verifiers check it against their IACAs).
 */
export async function importedMdoc(input: {
  issuerSigned: string;
  doctype: string;
  deviceKey: JWK;
}): Promise<StoredMdoc> {
  const { issuerSigned, doctype, deviceKey } = input as Partial<typeof input>;
  if (typeof issuerSigned !== 'string' || !issuerSigned)
    throw new WalletError('issuerSigned must be the base64url IssuerSigned of the mdoc');
  if (typeof doctype !== 'string' || !doctype)
    throw new WalletError('doctype must name the mdoc document type, e.g. org.iso.18013.5.1.mDL');
  if (typeof deviceKey !== 'object' || deviceKey === null || deviceKey.kty !== 'EC' || deviceKey.crv !== 'P-256')
    throw new WalletError('deviceKey must be an EC P-256 JWK (ES256 device authentication)');
  if (!deviceKey.d) throw new WalletError('deviceKey must be the private device key the mdoc is bound to');
  const { readIssuerSigned } = await import('./mdoc.js'); // the mdoc library loads only when an mdoc is involved
  let read: ReturnType<typeof readIssuerSigned>;
  try {
    read = readIssuerSigned(issuerSigned);
  } catch (err) {
    throw new WalletError(`the mdoc cannot be read: ${(err as Error).message}`);
  }
  // the MSO names its docType: a different one would be refused by every verifier (ISO/IEC 18013-5 §9.1.2.4)
  if (read.doctype !== doctype) throw new WalletError(`the mdoc is of doctype ${read.doctype}, not ${doctype}`);
  const stored: StoredMdoc = {
    id: randomUUID(),
    format: 'mso_mdoc',
    credential: issuerSigned,
    issuer: 'mdoc issuer',
    doctype,
    receivedAt: new Date().toISOString(),
    holderKey: deviceKey,
    claims: read.namespaces,
    ...(read.validUntil !== undefined ? { validUntil: read.validUntil } : {}),
  };
  return stored;
}
