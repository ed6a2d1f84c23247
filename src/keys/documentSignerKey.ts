import { createPublicKey, X509Certificate as NodeCertificate, type KeyObject } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';
import { isIssuerCa, type IssuerCa } from './issuerCertificate.js';
import { checkLeafPurpose, checkVerifierChain, readPemCertificates, readPemPrivateKey } from './x509.js';

/** Whether a generated document signer still serves: the local CA signed it, and it lasts past `until`. */
export function documentSignerFits(signer: unknown, ca: IssuerCa, until: Date): boolean {
  if (!isIssuerCa(signer)) return false;
  try {
    const cert = new NodeCertificate(signer.certificate);
    const caCert = new NodeCertificate(ca.certificate);
    return cert.checkIssued(caCert) && cert.verify(caCert.publicKey) && new Date(cert.validTo) >= until;
  } catch {
    return false;
  }
}

/** A document signer as the mdoc signer takes it: the private JWK and the chain (DER, signer first, without the IACA). */
export interface DocumentSignerKey {
  jwk: JWK;
  chain: Uint8Array[];
  /** the signer certificate's notAfter */
  expires: Date;
}

/** A document signer's PEM key and chain as a `DocumentSignerKey`, checked as a verifier checks it (mdlDS, digitalSignature, P-256). */
export async function documentSignerKey(
  text: { chain: string; key: string },
  where: { chain: string; key: string },
): Promise<DocumentSignerKey> {
  const chain = readPemCertificates(text.chain, where.chain);
  const key = readPemPrivateKey(text.key, where.key);
  const leaf = new NodeCertificate(chain[0]);
  const spki = (k: KeyObject) => (k.type === 'public' ? k : createPublicKey(k)).export({ format: 'der', type: 'spki' });
  if (!spki(leaf.publicKey).equals(spki(key)))
    throw new Error(`${where.key} is not the key of the first certificate (the document signer) of ${where.chain}`);
  if (leaf.ca)
    throw new Error(`${where.chain}: the first certificate is a CA certificate; it must be the document signer's own`);
  try {
    checkLeafPurpose(chain[0], 'mdoc-document-signer');
  } catch (err) {
    throw new Error(`${where.chain}: ${(err as Error).message}`, { cause: err });
  }
  await checkVerifierChain(chain, key, where.chain);
  const { kty, crv, x, y, d } = await exportJWK(key);
  return { jwk: { kty, crv, x, y, d } as JWK, chain, expires: new Date(leaf.validTo) };
}
