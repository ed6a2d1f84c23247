import { dirname, resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.js';
import { loadKeys, type KeptJwk, type KeyOrigin, type KeySet } from '../keys/keys.js';
import { KeyRing, keepPeriods } from '../keys/keyRing.js';
import {
  certifyCredentialKeys,
  certifySet,
  loadIssuerIdentity,
  signingIssuers,
  type IssuerIdentity,
} from '../keys/issuerIdentity.js';
import { checkCredentialKeyChains } from '../keys/credentialKeyChain.js';
import type { Store } from '../store/types.js';
import { loadClientIdentity, type ClientIdentity, type ClientIdentityOrigin } from '../verification/clientIdentity.js';
import { DEMO_PID_PATH, DEMO_PID_TYPE } from '../demo/pid.js';
import { demoRegistrations } from '../demo/registrar.js';
import { pidRequestKind } from '../identity/pid.js';
import { dcqlQueryFor } from '../verification/dcql.js';
import { loadRegistrations, type AskedFor, type QueryOf, type Registrations } from '../verification/registration.js';
import type { Config } from '../config/schema.js';
import { loadDemoIaca } from '../demo/iaca.js';
import type { IssuerCa } from '../keys/issuerCertificate.js';
import type { Logger } from '../log.js';

/** The identities the service signs and is known by: its key sets, the verifier's certificate, the issuer's certificate. */
export interface Identities {
  keys: KeySet;
  origins: KeyOrigin[];
  clientIdentity: ClientIdentity;
  verifierOrigin: ClientIdentityOrigin;
  issuerIdentity: IssuerIdentity;
  issuers: string[];
  keep: ReturnType<typeof keepPeriods>;
  /** ETSI TS 119 475: the clients' registration certificates, verified */
  registrations: Registrations;
  /** config demo: true: the demo's test IACA, whose mDLs and mdoc PIDs the demo hands out (src/demo/iaca.ts) */
  demoIaca?: IssuerCa;
}

/**
 * D20: with Redis (shared by every instance) generated keys and certificates live in the store, so all
 * instances sign with one key set; the memory store is one process's and lost on restart, so they go to
 * files there. HAIP 1.0 §6.1.1: the issuer certificate names every issuer identifier we sign SD-JWT VCs as.
 */
export async function loadIdentities(loaded: LoadedConfig, store: Store): Promise<Identities> {
  const { config, baseDir } = loaded;
  const shared = store.kind === 'redis' ? store : undefined;
  const { origins, keys: loadedKeys } = await loadKeys(config.keys, baseDir, { shared });
  // the demo's test IACA, written beside the generated certificates before the trust anchors (which may list it) are read
  const demoIaca = config.demo
    ? await loadDemoIaca(dirname(resolve(baseDir, config.issuer.certificateChain)), shared)
    : undefined;
  // the verifier's certificate is shared as the key sets are (D20)
  const { identity: clientIdentity, origin: verifierOrigin } = await loadClientIdentity(config.verifier, {
    baseUrl: config.baseUrl,
    responseUri: `${config.baseUrl}/vp/response`,
    baseDir,
    generate: config.keys.generate,
    shared,
  });
  let keys = loadedKeys;
  const keep = keepPeriods(config, config.demo ? [DEMO_PID_TYPE.validity] : []);
  const issuers = signingIssuers(config, DEMO_PID_PATH);
  const until = new Date(Date.now() + keep.credential);
  const credentialOrigin = origins.find((o) => o.set === 'credential')!;
  // mdoc: the local CA also makes document signers (ISO mdoc issuance) when a type is issued as an mdoc
  const issuerIdentity = await loadIssuerIdentity(config.issuer, {
    baseDir,
    generate: config.keys.generate,
    issuers,
    credential: credentialOrigin,
    store: shared,
    until,
    mdoc: config.credentialTypes.some((t) => t.mdoc && !t.verifyOnly),
  });
  // with neither the operator's certificate nor a local CA, a key's own x5c goes into credentials as it is
  if (!issuerIdentity.ca && !issuerIdentity.operator)
    await checkCredentialKeyChains(keys.credential, credentialKeysWhere(credentialOrigin), issuers);
  // the local CA certifies each credential key (its leaf is kept in the set, as the key's x5c)
  if (issuerIdentity.ca) {
    const certified = await certifyCredentialKeys(credentialOrigin, {
      store: shared,
      ca: issuerIdentity.ca,
      issuers,
      until,
    });
    keys = { ...keys, credential: { keys: certified.keys } };
    if (certified.readOnly)
      issuerIdentity.warnings.push(
        `${certified.readOnly} is read-only: this instance signs under issuer leaves of its own (the same local CA); give issuer.certificateChain and issuer.key to sign under one chain`,
      );
  }
  const registrations = await clientRegistrations(config, baseDir);
  return {
    keys,
    origins,
    clientIdentity,
    verifierOrigin,
    issuerIdentity,
    issuers,
    keep,
    registrations,
    ...(demoIaca ? { demoIaca } : {}),
  };
}

/**
 * The clients' registration certificates, each checked against the registrars and against the client's
 * verification scopes, with the queries the verifier makes for them. The demo makes its own test registrar
 * and certificate when it has none (src/demo/registrar.ts).
 */
async function clientRegistrations(config: Config, baseDir: string): Promise<Registrations> {
  const byName = new Map(config.credentialTypes.map((t) => [t.name, t]));
  const pid = config.identity.VerifiedIdentity && pidRequestKind(config.identity.VerifiedIdentity);
  const queryOf: QueryOf = (asked) => {
    if ('identity' in asked) {
      if (!pid) throw new Error('identity.VerifiedIdentity is not configured');
      return pid.query;
    }
    return dcqlQueryFor(
      asked.credentialTypes.map((name) => byName.get(name)!),
      config.baseUrl,
    );
  };
  const asked = (scope: string): AskedFor | undefined =>
    byName.has(scope)
      ? { credentialTypes: [scope] }
      : scope === 'VerifiedIdentity' && pid
        ? { identity: 'VerifiedIdentity' }
        : undefined;
  const load = () =>
    loadRegistrations(config.clients, { registrars: config.verifier.registrars, baseDir, queryOf, asked });
  if (config.demo && config.keys.generate) return demoRegistrations(config, baseDir, { queryOf, asked, load });
  return load();
}

/** Where the credential key set is kept, in the words of a start-up error. */
const credentialKeysWhere = (origin: KeyOrigin) =>
  origin.storeKey ? `store key ${origin.storeKey}` : `keys.credential (${origin.file})`;

/** A reloaded credential key set: certified by the local CA, or (without one or an operator's certificate) its x5c checked. */
function credentialReload(id: Identities, until: () => Date) {
  const { issuerIdentity, issuers } = id;
  if (issuerIdentity.ca)
    return async (set: { keys: KeptJwk[] }) => certifySet(set, { ca: issuerIdentity.ca!, issuers, until: until() });
  if (issuerIdentity.operator) return undefined;
  const where = credentialKeysWhere(id.origins.find((o) => o.set === 'credential')!);
  return async (set: { keys: KeptJwk[] }) => {
    await checkCredentialKeyChains(set, where, issuers);
    return set;
  };
}

/**
 * D20: the keys that sign and are published now, reloaded from where they came from (a rotation reaches
 * every instance within keys.rotation.reloadInterval); one signer for every signed cookie.
 */
export function keyRingOf(id: Identities, store: Store, logger: Logger): KeyRing {
  const { keep } = id;
  return new KeyRing(id.keys, id.origins, {
    keep,
    store: store.kind === 'redis' ? store : undefined,
    certifyCredential: credentialReload(id, () => new Date(Date.now() + keep.credential)),
    logger,
  });
}
