import { createPrivateKey, sign } from 'node:crypto';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { base64url, calculateJwkThumbprint, CompactEncrypt, importJWK, type JWK } from 'jose';
import { WalletError } from './errors.js';
import { reach } from './http.js';
import type { PresentationRequest } from './presentation.js';
import type { Selection } from './selection.js';
import type { StoredCredential } from './walletFile.js';

/**
 * An SD-JWT VC presentation (RFC 9901 §4): the credential with only the chosen disclosures, and a key
 * binding JWT signed with the credential's holder key: `aud` = the verifier's client_id, its `nonce`,
 * `iat` now, `sd_hash` over the presented SD-JWT (the library computes it).
 */
export async function createPresentation(
  credential: StoredCredential,
  disclose: string[],
  kb: { clientId: string; nonce: string; iat?: number },
): Promise<string> {
  if (credential.format !== 'dc+sd-jwt')
    throw new WalletError(`createPresentation presents SD-JWT VCs, not ${credential.format}; use presentationFor`);
  const { signer, alg } = holderSigner(credential.holderKey);
  const sdJwt = new SDJwtVcInstance({ hasher: digest, kbSigner: signer, kbSignAlg: alg });
  const frame = Object.fromEntries(disclose.map((name) => [name, true]));
  return sdJwt.present(credential.credential, frame, {
    kb: { payload: { aud: kb.clientId, nonce: kb.nonce, iat: kb.iat ?? Math.floor(Date.now() / 1000) } },
  });
}

/**
 * The presentation for one selection: an SD-JWT VC with a key binding JWT, or an mdoc DeviceResponse
 * signed over the OpenID4VP handover (§B.2.6.1: client_id, nonce, the thumbprint of the key the response
 * is encrypted to or null, response_uri).
 */
export async function presentationFor(selection: Selection, request: PresentationRequest): Promise<string> {
  if (!('namespace' in selection))
    return createPresentation(selection.credential, selection.disclose, {
      clientId: request.clientId,
      nonce: request.nonce,
    });
  const { presentMdoc } = await import('./mdoc.js'); // the mdoc library loads only when an mdoc is presented
  const { credential } = selection;
  const jwkThumbprint = request.encryption
    ? base64url.decode(await calculateJwkThumbprint(request.encryption.jwk, 'sha256'))
    : undefined;
  return presentMdoc(
    { issuerSigned: credential.credential, doctype: credential.doctype, deviceKey: credential.holderKey },
    { namespace: selection.namespace, elements: selection.disclose },
    {
      clientId: request.clientId,
      nonce: request.nonce,
      responseUri: request.responseUri,
      ...(jwkThumbprint ? { jwkThumbprint } : {}),
    },
  );
}

/**
 * OpenID4VP 1.0 §8.2: the response as a form POST to the response_uri; no redirects followed (§14.8). For
 * direct_post.jwt (§8.3), the parameters (with `vp_token` as a JSON object) are a JWE to the verifier's key,
 * sent as `response`.
 */
export async function submitResponse(
  request: PresentationRequest,
  params: Record<string, string>,
  fetchImpl: typeof fetch,
): Promise<{ status: number; body: unknown }> {
  let form: URLSearchParams;
  if (request.encryption) {
    const { jwk, enc } = request.encryption;
    const payload: Record<string, unknown> = {
      ...params,
      ...(params.vp_token !== undefined ? { vp_token: JSON.parse(params.vp_token) as unknown } : {}),
    };
    if (request.state !== undefined) payload.state = request.state;
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc, ...(jwk.kid !== undefined ? { kid: jwk.kid } : {}) })
      .encrypt(await importJWK(jwk, 'ECDH-ES'));
    form = new URLSearchParams({ response: jwe });
  } else {
    form = new URLSearchParams(params);
    if (request.state !== undefined) form.set('state', request.state);
  }
  const response = await reach(
    () =>
      fetchImpl(request.responseUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        redirect: 'manual',
      }),
    request.responseUri,
  );
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body };
}

/** A signer for the holder's private JWK: ES256 (P-256) or EdDSA (Ed25519), as a JWS signature (base64url). */
export function holderSigner(jwk: JWK): { signer: (data: string) => string; alg: 'ES256' | 'EdDSA' } {
  if (!jwk.d) throw new WalletError('the holder key of this credential is not a private key');
  const key = createPrivateKey({ key: jwk as never, format: 'jwk' });
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    // RFC 7518 §3.4: an ES256 JWS signature is r || s, not DER
    return {
      alg: 'ES256',
      signer: (data) => sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
    };
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    return { alg: 'EdDSA', signer: (data) => sign(null, Buffer.from(data), key).toString('base64url') };
  }
  throw new WalletError(`holder keys of type ${jwk.kty}/${String(jwk.crv)} are not supported; use P-256 or Ed25519`);
}
