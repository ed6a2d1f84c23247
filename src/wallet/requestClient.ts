import { getOpenid4vpClientId } from '@openid4vc/openid4vp';
import { compactVerify } from 'jose';
import {
  altNames,
  certificatePublicKey,
  CertificateError,
  checkChain,
  readX5c,
  subjectName,
  x509Hash,
} from './certificates.js';
import { WalletError } from './errors.js';

/**
 * Checks the Request Object's `client_id` prefix (OpenID4VP 1.0 §5.9.3) against how the object is signed:
 * X.509 prefixes through {@link checkX509Request}, `redirect_uri` unsigned and equal to the `response_uri`.
 * Returns the subject of the verifier's leaf certificate for the X.509 prefixes.
 */
export async function checkClient(
  jwt: string,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  clientId: string,
  trust: Uint8Array[] | undefined,
): Promise<string | undefined> {
  let prefix: string;
  let identifier: string;
  try {
    ({ clientIdPrefix: prefix, clientIdIdentifier: identifier } = getOpenid4vpClientId({
      clientId,
      responseMode: String(payload.response_mode),
    }) as { clientIdPrefix: string; clientIdIdentifier: string });
  } catch (err) {
    throw new WalletError(`unsupported client_id: ${(err as Error).message}`);
  }
  if (prefix === 'x509_hash' || prefix === 'x509_san_dns')
    return checkX509Request(jwt, header, prefix, identifier, payload.response_uri, trust);
  if (prefix === 'redirect_uri') {
    // OpenID4VP 1.0 §5.9.3: redirect_uri requests cannot be signed; with direct_post the identifier is the response_uri
    if (header.alg !== 'none')
      throw new WalletError('a request with the redirect_uri client_id prefix must not be signed');
    if (payload.response_uri !== identifier)
      throw new WalletError('the response_uri differs from the redirect_uri client identifier');
    return undefined;
  }
  throw new WalletError(
    `client_id prefix ${prefix} is not supported by the dev wallet; it supports x509_hash, x509_san_dns and redirect_uri`,
  );
}

/**
 * OpenID4VP 1.0 §5.9.3 `x509_hash` and `x509_san_dns`: the Request Object is signed (ES256) with the key of
 * the leaf of its `x5c`; the chain ends at a CA the wallet trusts; the identifier is the leaf's hash, or a
 * dNSName of the leaf that is also the response URI's host.
 */
async function checkX509Request(
  jwt: string,
  header: Record<string, unknown>,
  prefix: string,
  identifier: string,
  responseUri: unknown,
  trust: Uint8Array[] | undefined,
): Promise<string> {
  if (header.alg !== 'ES256')
    throw new WalletError(`a ${prefix} request must be signed with ES256, not ${String(header.alg)}`);
  const x5c = header.x5c;
  if (!Array.isArray(x5c) || x5c.length === 0 || !x5c.every((c) => typeof c === 'string'))
    throw new WalletError(`a ${prefix} request must carry its certificate chain in x5c`);
  if (!trust?.length)
    throw new WalletError(
      'the request is signed under a verifier certificate: pass --trust <CA file> to say which CAs to trust (npm start prints which: keys/verifier-ca.pem)',
    );
  let chain: Uint8Array[];
  try {
    chain = readX5c(x5c, 'the request x5c');
  } catch {
    throw new WalletError('the request x5c does not hold readable certificates');
  }
  try {
    await checkChain(chain, { trust });
  } catch (err) {
    if (err instanceof CertificateError)
      throw new WalletError(`the verifier certificate is not trusted: ${err.message}`);
    throw err;
  }
  try {
    await compactVerify(jwt, certificatePublicKey(chain[0]), { algorithms: ['ES256'] });
  } catch {
    throw new WalletError('the request object signature does not verify with its x5c leaf certificate');
  }
  if (prefix === 'x509_hash' && identifier !== x509Hash(chain[0]))
    throw new WalletError('the x509_hash client_id is not the hash of the x5c leaf certificate');
  if (prefix === 'x509_san_dns') {
    if (!altNames(chain[0], 'dns').includes(identifier))
      throw new WalletError(`the x5c leaf certificate does not name ${identifier} (subjectAltName dNSName)`);
    let host: string | undefined;
    try {
      host = new URL(String(responseUri)).hostname;
    } catch {
      // checked below as a missing response_uri
    }
    if (host !== identifier)
      throw new WalletError(`the response_uri host is not ${identifier}, the x509_san_dns client identifier`);
  }
  return subjectName(chain[0]);
}
