import { createHash, randomUUID } from 'node:crypto';
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { decodeJwt, SignJWT, type JWK } from 'jose';
import type { DevWallet } from '../../src/wallet/holder.js';
import { newWallet } from './flows.js';
import { encryptAnswer } from './encryptAnswer.js';
import { keyPair } from './keys.js';

export const PID_VCT = 'urn:eudi:pid:1';

export interface PidIssuer {
  issuer: string;
  /** public keys, for the identity block's trustedIssuers */
  jwks: { keys: JWK[] };
  /**
   * A dev wallet holding one PID of this issuer, bound to a fresh holder key. Every claim is selectively
   * disclosable, as the EU PID's are.
   */
  walletWith(claims: Record<string, unknown>, opts?: { vct?: string; exp?: number; iss?: string }): Promise<DevWallet>;
  /**
   * An independent holder (no dev wallet code): fetches the Request Object behind an openid4vp:// link,
   * presents a PID with every claim disclosed and a key binding JWT made with jose, and posts the answer
   * (direct_post). Presents what the dev wallet would refuse to (a PID that does not match the query).
   */
  presentDirectly(
    requestLink: string,
    claims: Record<string, unknown>,
    opts?: { vct?: string },
  ): Promise<{ status: number; body: any }>;
}

/** A PID issuer other than this service: its own key, credentials made with @sd-jwt/sd-jwt-vc, never our issuer's code. */
export async function testPidIssuer(issuer = 'https://pid.test'): Promise<PidIssuer> {
  const { privateJwk, publicJwk: signing } = await keyPair(randomUUID());
  const publicJwk = { ...signing, use: 'sig' };
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(privateJwk),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  async function issue(claims: Record<string, unknown>, opts: { vct?: string; exp?: number; iss?: string }) {
    const holder = await keyPair();
    const now = Math.floor(Date.now() / 1000);
    const credential = await sdJwt.issue(
      {
        ...claims,
        iss: opts.iss ?? issuer,
        vct: opts.vct ?? PID_VCT,
        iat: now - 60,
        exp: opts.exp ?? now + 3600,
        cnf: { jwk: holder.publicJwk },
      },
      { _sd: Object.keys(claims) } as never,
      { header: { kid: privateJwk.kid } },
    );
    return { credential, holder };
  }
  return {
    issuer,
    jwks: { keys: [publicJwk] },
    async presentDirectly(requestLink, claims, opts = {}) {
      const { credential, holder } = await issue(claims, opts);
      const requestUri = new URL(requestLink).searchParams.get('request_uri')!;
      const request = decodeJwt(await (await fetch(requestUri)).text()) as {
        client_id: string;
        nonce: string;
        state: string;
        response_uri: string;
        response_mode: string;
        dcql_query: { credentials: Array<{ id: string }> };
        client_metadata: { jwks?: { keys: JWK[] } };
      };
      const kb = await new SignJWT({
        aud: request.client_id,
        nonce: request.nonce,
        iat: Math.floor(Date.now() / 1000),
        sd_hash: createHash('sha256').update(credential).digest('base64url'),
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
        .sign(holder.privateKey);
      const vpToken = { [request.dcql_query.credentials[0].id]: [`${credential}${kb}`] };
      // direct_post.jwt (OpenID4VP 1.0 §8.3): encrypted to the request's key, with jose
      const jwk = request.response_mode === 'direct_post.jwt' ? request.client_metadata.jwks!.keys[0] : undefined;
      const form: Record<string, string> = jwk
        ? { response: await encryptAnswer(jwk, { vp_token: vpToken, state: request.state }) }
        : { state: request.state, vp_token: JSON.stringify(vpToken) };
      const res = await fetch(request.response_uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
      return { status: res.status, body: await res.json().catch(() => undefined) };
    },
    async walletWith(claims, opts = {}) {
      const { credential, holder } = await issue(claims, opts);
      const wallet = await newWallet();
      await wallet.import(credential, holder.privateJwk);
      return wallet;
    },
  };
}
