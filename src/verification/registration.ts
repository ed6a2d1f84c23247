import { X509Certificate } from 'node:crypto';
import { resolve } from 'node:path';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type ProtectedHeaderParameters } from 'jose';
import { readText } from '../keys/files.js';
import { readPemCertificates, subjectName, verifyCertificateChain, X509ChainError } from '../keys/x509.js';
import { invalidRequest } from '../rules/errors.js';
import { beyondRegistration, readRegisteredCredentials, type RegisteredCredential } from '../rules/registration.js';
import type { DcqlQuery } from './dcql.js';

/**
 * Registration certificates of the relying parties we verify for (ETSI TS 119 475, ARF Annex 2 Topic 44,
 * RPRC_19 to RPRC_21): the registrar's signed statement of who a relying party is and what it registered to
 * ask for. We act as an intermediary: the request is signed by our access certificate, and carries the
 * relying party's registration certificate in `verifier_info` (OpenID4VP 1.0 §5.1).
 */

/** ETSI TS 119 475 §5.2.1: the JWT form (remote presentations); `rc-wrp+cwt` is the proximity form. */
export const REGISTRATION_CERTIFICATE_TYPE = 'rc-wrp+jwt';
/** ETSI TS 119 472-2: the `verifier_info` format of a registration certificate. */
export const VERIFIER_INFO_FORMAT = 'registration_cert';
/** JAdES (ETSI TS 119 182-1) algorithms: ECDSA, RSA-PSS and EdDSA; never `none`, a MAC or RSA PKCS#1 v1.5. */
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

/** OpenID4VP 1.0 §5.1: one attestation about the verifier. */
export interface VerifierInfo {
  format: string;
  data: string;
  credential_ids?: string[];
}

/** A registration certificate, verified at start-up. */
export interface Registration {
  /** the compact JWT, as sent in verifier_info */
  jwt: string;
  /** where it was configured: `clients[i].registration.certificates[j] (file)` */
  where: string;
  /** `sub`: the relying party's registered identifier */
  subject: string;
  /** `name`: the relying party's name a wallet shows */
  name?: string;
  /** `exp`, epoch seconds (optional in ETSI TS 119 475) */
  expiresAt?: number;
  credentials: RegisteredCredential[];
  /** the signing certificate's subject: the registrar (provider of registration certificates) */
  registrar: string;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Reads and verifies one registration certificate: a compact JWS of `typ` rc-wrp+jwt whose `x5c` chains to
 * one of the registrars' anchors (RFC 5280 path validation, src/keys/certPath.ts), signed by that chain's
 * leaf (jose), within its validity at `now`, and registering `subject`. Throws an Error naming `where`.
 */
export async function loadRegistrationCertificate(
  file: string,
  o: { where: string; subject: string; anchors: Uint8Array[]; now?: Date },
): Promise<Registration> {
  const where = `${o.where} (${file})`;
  const text = await readText(file);
  if (text === undefined) throw new Error(`${where}: not found`);
  return verifyRegistrationCertificate(text.trim(), { ...o, where });
}

/** The checks of loadRegistrationCertificate on the certificate's text. */
export async function verifyRegistrationCertificate(
  jwt: string,
  o: { where: string; subject: string; anchors: Uint8Array[]; now?: Date },
): Promise<Registration> {
  const { where } = o;
  const now = o.now ?? new Date();
  if (!COMPACT_JWS.test(jwt))
    throw new Error(
      `${where}: not a JWT (a compact JWS); this service sends the JWT form of ETSI TS 119 475 (${REGISTRATION_CERTIFICATE_TYPE})`,
    );
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(jwt);
  } catch {
    throw new Error(`${where}: its header is not readable JSON`);
  }
  if (header.typ !== REGISTRATION_CERTIFICATE_TYPE)
    throw new Error(
      `${where}: typ is ${JSON.stringify(header.typ ?? null)}, not ${REGISTRATION_CERTIFICATE_TYPE} (ETSI TS 119 475 §5.2.1)`,
    );
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg))
    throw new Error(
      `${where}: alg ${JSON.stringify(header.alg ?? null)} is not accepted; accepted: ${ALGORITHMS.join(', ')}`,
    );
  const x5c = header.x5c;
  if (!Array.isArray(x5c) || x5c.length === 0 || !x5c.every((c) => typeof c === 'string' && c.length > 0))
    throw new Error(`${where}: has no x5c: the registrar's certificate chain must be in its header`);
  let chain: Uint8Array[];
  try {
    chain = x5c.map((c, i) => readPemCertificates(pemOf(c), `x5c[${i}]`)[0]);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await verifyCertificateChain(chain, o.anchors, now);
  } catch (err) {
    const reason = err instanceof X509ChainError ? err.message : (err as Error).message;
    throw new Error(`${where}: its x5c does not chain to a registrar of verifier.registrars: ${reason}`, {
      cause: err,
    });
  }
  const key = new X509Certificate(chain[0]).publicKey;
  try {
    await jwtVerify(jwt, key, { algorithms: [header.alg], typ: REGISTRATION_CERTIFICATE_TYPE, currentDate: now });
  } catch (err) {
    throw new Error(`${where}: ${verifyFailure(err, jwt)}`, { cause: err });
  }
  const payload = decodeJwt(jwt);
  if (typeof payload.iat === 'number' && payload.iat > now.getTime() / 1000 + 60)
    throw new Error(`${where}: is issued in the future (iat ${new Date(payload.iat * 1000).toISOString()})`);
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error(`${where}: has no sub`);
  if (payload.sub !== o.subject)
    throw new Error(
      `${where}: registers ${JSON.stringify(payload.sub)}, not this client's registration.subject ${JSON.stringify(o.subject)}: a registration certificate of another relying party`,
    );
  let credentials: RegisteredCredential[];
  try {
    credentials = readRegisteredCredentials(payload.credentials);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  return {
    jwt,
    where,
    subject: payload.sub,
    ...(typeof payload.name === 'string' ? { name: payload.name } : {}),
    ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
    credentials,
    registrar: subjectName(chain[0]),
  };
}

const pemOf = (b64: string) => `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;

function verifyFailure(err: unknown, jwt: string): string {
  if (err instanceof errors.JWTExpired) {
    const exp = decodeJwt(jwt).exp;
    return `has expired${typeof exp === 'number' ? ` (exp ${new Date(exp * 1000).toISOString()})` : ''}: ask the registrar for a new one`;
  }
  if (err instanceof errors.JWTClaimValidationFailed) return `${err.claim}: ${err.reason} (${err.message})`;
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return "its signature does not verify with the key of its x5c's leaf";
  return `not a valid JWT (${(err as Error).message})`;
}

/** What a request asks for: credential types by name, or the person-identification request (D12). */
export type AskedFor = { credentialTypes: readonly string[] } | { identity: 'VerifiedIdentity' };

/** The DCQL query this service makes for what was asked (src/verification/dcql.ts, src/identity/pid.ts). */
export type QueryOf = (asked: AskedFor) => DcqlQuery;

/** Which registration a request goes under: the first that registers all it asks for and has not expired. */
export type Choice =
  { registration: Registration } | { expired: Registration } | { beyond: string[]; registrations: number };

/**
 * The registration certificates of every client that has some, verified at start-up, and which one a
 * request for a client goes under.
 */
export class Registrations {
  constructor(
    private readonly byClient: ReadonlyMap<string, readonly Registration[]>,
    private readonly queryOf: QueryOf,
  ) {}

  /** the client's registrations, in configured order (none: the client has no registration certificate) */
  of(clientId: string): readonly Registration[] {
    return this.byClient.get(clientId) ?? [];
  }

  get clients(): ReadonlyMap<string, readonly Registration[]> {
    return this.byClient;
  }

  /** The registration a query for `clientId` goes under, or why there is none (undefined: the client has none). */
  choose(clientId: string, query: DcqlQuery, now = Date.now() / 1000): Choice | undefined {
    const registrations = this.of(clientId);
    if (registrations.length === 0) return undefined;
    let expired: Registration | undefined;
    let closest: string[] | undefined;
    for (const registration of registrations) {
      const beyond = beyondRegistration(query.credentials, registration.credentials);
      if (beyond.length === 0) {
        if (registration.expiresAt === undefined || registration.expiresAt > now) return { registration };
        expired ??= registration;
      } else if (!closest || beyond.length < closest.length) closest = beyond;
    }
    return expired ? { expired } : { beyond: closest!, registrations: registrations.length };
  }

  /**
   * At PAR or authorise: a request beyond every registration of its client, or under an expired one, is
   * refused (invalid_request, naming what is not registered). A wallet would refuse it (ARF RPRC_21).
   */
  checkRequest(clientId: string, asked: AskedFor): void {
    if (this.of(clientId).length === 0) return;
    const choice = this.choose(clientId, this.queryOf(asked))!;
    if ('registration' in choice) return;
    if ('expired' in choice)
      throw invalidRequest(
        `scope: the relying party's registration certificate for this request expired on ${new Date(choice.expired.expiresAt! * 1000).toISOString()}; the operator must renew it (ETSI TS 119 475)`,
      );
    throw invalidRequest(
      `scope: asks for more than the relying party's registration certificate${choice.registrations > 1 ? 's (any one of them)' : ''} registers: ${choice.beyond.join('; ')} (ETSI TS 119 475; wallets refuse such requests, ARF RPRC_21)`,
    );
  }

  /**
   * OpenID4VP 1.0 §5.1 `verifier_info` of a request for `clientId`: its registration certificate, one entry
   * (format registration_cert). An expired one is sent all the same, so that the wallet can tell why it
   * refuses; a request no registration covers (refused at PAR) carries none.
   */
  verifierInfo(clientId: string | undefined, query: DcqlQuery): VerifierInfo[] | undefined {
    if (clientId === undefined) return undefined;
    const choice = this.choose(clientId, query);
    if (!choice || 'beyond' in choice) return undefined;
    const registration = 'registration' in choice ? choice.registration : choice.expired;
    return [{ format: VERIFIER_INFO_FORMAT, data: registration.jwt }];
  }

  /** No client has a registration certificate. */
  static none(): Registrations {
    return new Registrations(new Map(), () => ({ credentials: [] }));
  }
}

/** One client's registration configuration (`clients[i].registration`). */
export interface ClientRegistrationConfig {
  clientId: string;
  scopes: readonly string[];
  registration?: { subject: string; certificates: readonly string[] };
}

/**
 * Start-up: every client's registration certificates verified against the registrars' anchors
 * (`verifier.registrars`, PEM files), and each of its verification scopes within one of them: a client
 * whose scope asks for more than it registered is refused, naming the client, the scope and what is not
 * registered. `asked` says what a scope asks for (undefined: a scope that makes no presentation request).
 */
export async function loadRegistrations(
  clients: readonly ClientRegistrationConfig[],
  o: {
    registrars: readonly string[] | undefined;
    baseDir: string;
    queryOf: QueryOf;
    asked: (scope: string) => AskedFor | undefined;
    now?: Date;
  },
): Promise<Registrations> {
  if (!clients.some((c) => c.registration)) return new Registrations(new Map(), o.queryOf);
  const anchors: Uint8Array[] = [];
  for (const [i, name] of (o.registrars ?? []).entries()) {
    const file = resolve(o.baseDir, name);
    const pem = await readText(file);
    if (pem === undefined) throw new Error(`verifier.registrars[${i}] (${file}): not found`);
    anchors.push(...readPemCertificates(pem, `verifier.registrars[${i}] (${file})`));
  }
  if (anchors.length === 0)
    throw new Error('verifier.registrars: a client has a registration certificate, and no registrar is configured');
  const byClient = new Map<string, Registration[]>();
  for (const [i, client] of clients.entries()) {
    if (!client.registration) continue;
    const registrations: Registration[] = [];
    for (const [j, name] of client.registration.certificates.entries()) {
      registrations.push(
        await loadRegistrationCertificate(resolve(o.baseDir, name), {
          where: `clients[${i}] (${client.clientId}) registration.certificates[${j}]`,
          subject: client.registration.subject,
          anchors,
          ...(o.now ? { now: o.now } : {}),
        }),
      );
    }
    byClient.set(client.clientId, registrations);
  }
  const loaded = new Registrations(byClient, o.queryOf);
  const now = (o.now ?? new Date()).getTime() / 1000;
  for (const [i, client] of clients.entries()) {
    if (!client.registration) continue;
    for (const scope of client.scopes) {
      const asked = o.asked(scope);
      if (!asked) continue;
      const choice = loaded.choose(client.clientId, o.queryOf(asked), now)!;
      if ('beyond' in choice)
        throw new Error(
          `clients[${i}] (${client.clientId}): scope ${scope} asks for more than its registration certificate${choice.registrations > 1 ? 's' : ''} register${choice.registrations > 1 ? '' : 's'}: ${choice.beyond.join('; ')}`,
        );
    }
  }
  return loaded;
}
