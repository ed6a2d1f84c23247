/**
 * What both servers are configured with: the same client (client_secret_post, PKCE S256, one redirect
 * URI), the same scopes and claims, the same RS256 ID token key (one key file, generated once per run),
 * the same lifetimes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JWK } from 'jose';

export const CLIENT = {
  id: 'bench-rp',
  secret: 'bench-secret-0123456789abcdef',
  redirect: 'https://rp.bench.example/cb',
};
export const ATTRIBUTES = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
export const PIN = '4321';
export const ISSUE_SCOPE = 'openid issue.EmployeeBadge';
export const VERIFY_SCOPE = 'openid EmployeeBadge';
/** D13's External Client flow: the issuance scope with `External` (the webhook, not the browser, brings the client back). */
export const EXTERNAL_ISSUE_SCOPE = `${ISSUE_SCOPE} External`;
/** Issue 18's identity flow (D12, VerifiedIdentity): the holder presents a PID from an issuer other than this service. */
export const IDENTITY_SCOPE = 'openid VerifiedIdentity';
/**
 * Issue 48's Annex C flow (ISO/IEC 18013-7, `org-iso-mdoc`): an mDL of the bench IACA (made once per run,
 * benchIacaFile and benchMdocSignerFile), presented through the Digital Credentials API.
 */
export const ANNEX_C_SCOPE = 'openid MobileLicence';
export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';
export const mdlClaims = { family_name: 'Lovelace', given_name: 'Ada' };
/** The bench PID issuer (its key: pidIssuerKeyFile, generated once per run) and the PID's type. */
export const PID_ISSUER = 'https://pid.bench';
export const PID_VCT = 'urn:eudi:pid:1';
/** A virtual user's PID claims (a person each: the subject claim differs). */
export const pidClaims = (vu: number) => ({
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1815-12-10',
  nationalities: ['GB'],
  personal_administrative_number: `PAN-bench-${vu}`,
});
/** The bench client's webhook secret (Standard Webhooks: whsec_ and the base64 of 32 bytes); our server signs with it, the load process verifies. */
export const WEBHOOK_SECRET = `whsec_${Buffer.from('bench-webhook-secret-0123456789a').toString('base64')}`;
/** Where the load process's webhook receiver listens (its port is chosen before our server starts: ServerSpec.webhookPort). */
export const webhookUrl = (port: number) => `http://127.0.0.1:${port}/hooks`;

/**
 * Codes live longer than the default 60 s so that the token phase can redeem codes minted before it
 * (the brief: "start the service with a longer lifetimes.code"); the baseline gets the same TTL.
 */
export const LIFETIMES = { par: 60, code: 600, token: 60, offer: 300, interaction: 600, continuation: 300 };
/** --soak: short lifetimes so that 100,000 requests span several expiry periods and the store's bound shows. */
export const SOAK_LIFETIMES = { par: 10, code: 10, token: 10, offer: 20, interaction: 20, continuation: 20 };

export interface ServerSpec {
  kind: 'ours' | 'baseline';
  store: 'memory' | 'redis';
  redisUrl: string;
  /** unique per server and run; never a FLUSHALL */
  redisPrefix: string;
  keyDir: string;
  lifetimes: typeof LIFETIMES;
  port: number;
  /** ours: the port of the load process's webhook receiver (external_issuance_flow), known before the server starts */
  webhookPort: number;
}

export const keyFiles = (keyDir: string) => ({
  idToken: join(keyDir, 'id-token.jwks.json'),
  credential: join(keyDir, 'credential.jwks.json'),
  cookies: join(keyDir, 'cookies.json'),
  pairwise: join(keyDir, 'pairwise.json'),
});

/** The verifier's certificate and key (HAIP 1.0: requests signed under x509_hash), made once per run by setup.ts. */
export const verifierFiles = (keyDir: string) => ({
  certificateChain: join(keyDir, 'verifier-chain.pem'),
  key: join(keyDir, 'verifier-key.pem'),
});

/** Ours' issuer certificate (leaf) and key, made per server by setup.ts: the leaf names the server's credential issuer. */
export const issuerFiles = (keyDir: string, port: number) => ({
  certificateChain: join(keyDir, `issuer-chain-${port}.pem`),
  key: join(keyDir, `issuer-key-${port}.pem`),
});

/** The bench PID issuer's private ES256 JWK (with its kid), generated with the run's keys (setup.ts makeKeys): our config trusts its public part, the load process signs PIDs with it. */
export const pidIssuerKeyFile = (keyDir: string) => join(keyDir, 'pid-issuer.jwk.json');

/** The bench IACA (PEM; our config trusts it for MobileLicence mdocs) and its document signer (JSON: chain and private JWK; the load process signs mDLs with it). */
export const benchIacaFile = (keyDir: string) => join(keyDir, 'bench-iaca.pem');
export const benchMdocSignerFile = (keyDir: string) => join(keyDir, 'bench-mdoc-signer.json');

export function readPidIssuerKey(keyDir: string): { privateJwk: JWK; publicJwk: JWK } {
  const privateJwk = JSON.parse(readFileSync(pidIssuerKeyFile(keyDir), 'utf8')) as JWK;
  const { d: _d, ...publicJwk } = privateJwk;
  return { privateJwk, publicJwk };
}

/** Our service's configuration, as an operator would write it. */
export function oursConfig(spec: ServerSpec): Record<string, unknown> {
  return {
    baseUrl: `http://127.0.0.1:${spec.port}`,
    port: spec.port,
    host: '127.0.0.1',
    store: spec.store === 'memory' ? 'memory' : { url: spec.redisUrl, keyPrefix: spec.redisPrefix },
    logLevel: 'silent',
    keys: { ...keyFiles(spec.keyDir), generate: false },
    verifier: {
      ...verifierFiles(spec.keyDir),
      trustAnchors: [{ certificates: benchIacaFile(spec.keyDir), formats: ['mso_mdoc'], types: ['MobileLicence'] }],
    },
    // HAIP 1.0 §6.1.1: credentials and status lists carry the issuer's chain (x5c), as in production
    issuer: issuerFiles(spec.keyDir, spec.port),
    // as production runs it (issue 21): metrics on, on a listener of their own; rate limits at their defaults
    metrics: { port: 0 },
    lifetimes: spec.lifetimes,
    credentialTypes: [
      {
        name: 'EmployeeBadge',
        displayName: 'Employee badge',
        pinCodeLength: 4,
        validity: 'P30D',
        attributes: {
          FirstName: { type: 'string' },
          LastName: { type: 'string' },
          Email: { type: 'email', required: false },
        },
      },
      // only annex_c_verification_flow asks for it: an mDL of the bench IACA
      {
        name: 'MobileLicence',
        displayName: 'Mobile driving licence',
        mdoc: { doctype: MDL_DOCTYPE, namespace: MDL_NAMESPACE },
        attributes: { family_name: { type: 'string' }, given_name: { type: 'string' } },
      },
    ],
    clients: [
      {
        clientId: CLIENT.id,
        clientName: 'Bench RP',
        clientSecret: CLIENT.secret,
        redirectUris: [CLIENT.redirect],
        pkce: 'required',
        pkceMethods: ['S256'],
        // External: only external_issuance_flow requests it; the webhook goes to that phase's load process.
        // VerifiedIdentity: only identity_flow requests it
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External', 'VerifiedIdentity', 'MobileLicence'],
        webhook: { url: webhookUrl(spec.webhookPort), secret: WEBHOOK_SECRET },
      },
    ],
    identity: {
      VerifiedIdentity: {
        vct: [PID_VCT],
        claims: ['given_name', 'family_name', 'birthdate'],
        optionalClaims: ['nationalities'],
        subjectClaim: 'personal_administrative_number',
        trustedIssuers: [{ issuer: PID_ISSUER, jwks: { keys: [readPidIssuerKey(spec.keyDir).publicJwk] } }],
      },
    },
  };
}
