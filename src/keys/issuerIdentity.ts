import { resolve } from 'node:path';
import type { JWK } from 'jose';
import type { IssuerConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { readText } from './files.js';
import {
  certifyCredentialKey,
  checkIssuerFiles,
  documentSignerKey,
  generatedLeafFits,
  previousCertificateKey,
  type DocumentSignerKey,
  type IssuerCa,
} from './issuerCertificate.js';
import { KINDS, type KeptJwk, type KeyOrigin } from './keys.js';
import type { SigningKeys } from './keyRing.js';
import { localCa } from './localCa.js';
import { placeOf } from './rotate.js';

export { ISSUER_CA_STORE_KEY } from './localCa.js';
export {
  documentSignerStoreKey,
  documentSignersOf,
  localDocumentSigners,
  type DocumentSigners,
} from './documentSigners.js';

/** Every issuer identifier we sign SD-JWT VCs as (the wallet issuer, and the demo's PID issuer): the leaf names each. */
export function signingIssuers(
  config: { baseUrl: string; walletPath: string; demo?: boolean },
  demoPath: string,
): string[] {
  return [`${config.baseUrl}/${config.walletPath}`, ...(config.demo ? [`${config.baseUrl}/${demoPath}`] : [])];
}

/** How our credentials are certified (HAIP 1.0 §6.1.1), for the start-up log and the key commands. */
export interface IssuerIdentity {
  /** `issuer.certificateChain` and `issuer.key` exist: that key signs, under that chain */
  operator?: { jwk: JWK; previous: JWK[] };
  /** generated: the local CA that certifies each key of the credential key set */
  ca?: IssuerCa;
  /** file: the operator's; local-file, store: the local CA made at an earlier start; none: no certificate */
  origin: 'file' | 'generated-file' | 'generated-store' | 'local-file' | 'store' | 'none';
  /** generated: the local CA's certificate, which a wallet must be told to trust */
  caFile?: string;
  /** `issuer.documentSigner`: the operator's mdoc document signer (with the local CA, `localDocumentSigners` makes them) */
  documentSigner?: DocumentSignerKey;
  warnings: string[];
}

/**
 * Resolves `issuer` at start-up. Both files: the operator's chain and key, checked as a wallet will check
 * them (naming the config path in errors). Neither, with `keys.generate`: the local issuer CA. Neither
 * without it: no certificate (credentials carry only `kid`, for operators without certificates).
 *
 * `issuers`: every issuer identifier we sign SD-JWT VCs as (the leaf must name each); `until`: when a
 * credential signed now may expire at the latest (a leaf that ends earlier gets a warning, or is remade).
 */
export async function loadIssuerIdentity(
  cfg: IssuerConfig,
  opts: {
    baseDir: string;
    generate: boolean;
    issuers: string[];
    credential: KeyOrigin;
    store?: Store;
    until: Date;
    mdoc?: boolean;
  },
): Promise<IssuerIdentity> {
  const identity = await loadSdJwtIdentity(cfg, opts);
  if (cfg.documentSigner) {
    const files = {
      chain: resolve(opts.baseDir, cfg.documentSigner.certificateChain),
      key: resolve(opts.baseDir, cfg.documentSigner.key),
    };
    const [chain, key] = await Promise.all([readText(files.chain), readText(files.key)]);
    if (chain === undefined) throw new Error(`issuer.documentSigner.certificateChain (${files.chain}) not found`);
    if (key === undefined) throw new Error(`issuer.documentSigner.key (${files.key}) not found`);
    identity.documentSigner = await documentSignerKey(
      { chain, key },
      {
        chain: `issuer.documentSigner.certificateChain (${files.chain})`,
        key: `issuer.documentSigner.key (${files.key})`,
      },
    );
    if (identity.documentSigner.expires < opts.until) {
      identity.warnings.push(
        `issuer.documentSigner.certificateChain (${files.chain}): the document signer certificate expires on ${identity.documentSigner.expires.toISOString()}, before mdocs issued now do (up to ${opts.until.toISOString()}); verifiers will refuse them then`,
      );
    }
  } else if (opts.mdoc && !identity.ca) {
    identity.warnings.push(
      identity.operator
        ? 'issuer.documentSigner is not given: credential types with mdoc are offered as SD-JWT VCs only (give a document signer certificate under your IACA, with its key, to issue mso_mdoc)'
        : 'no issuer certificate: credential types with mdoc are offered as SD-JWT VCs only (mso_mdoc needs a document signer: keys.generate, or issuer.documentSigner)',
    );
  }
  return identity;
}

async function loadSdJwtIdentity(
  cfg: IssuerConfig,
  opts: { baseDir: string; generate: boolean; issuers: string[]; credential: KeyOrigin; store?: Store; until: Date },
): Promise<IssuerIdentity> {
  const chainFile = resolve(opts.baseDir, cfg.certificateChain);
  const keyFile = resolve(opts.baseDir, cfg.key);
  const [chain, key] = await Promise.all([readText(chainFile), readText(keyFile)]);
  const warnings: string[] = [];
  if (chain !== undefined && key !== undefined) {
    const operator = await checkIssuerFiles({ chain: chainFile, key: keyFile }, { chain, key }, opts.issuers);
    if (operator.expires < opts.until) {
      warnings.push(
        `issuer.certificateChain (${chainFile}): the leaf certificate expires on ${operator.expires.toISOString()}, before credentials issued now do (up to ${opts.until.toISOString()}); wallets and verifiers that check it then will refuse them`,
      );
    }
    const previous: JWK[] = [];
    for (const [i, path] of cfg.previousCertificates.entries()) {
      const file = resolve(opts.baseDir, path);
      const pem = await readText(file);
      if (pem === undefined) throw new Error(`issuer.previousCertificates[${i}]: ${file} not found`);
      previous.push(await previousCertificateKey(pem, `issuer.previousCertificates[${i}] (${file})`));
    }
    return { operator: { jwk: operator.jwk, previous }, origin: 'file', warnings };
  }
  if (chain !== undefined || key !== undefined) {
    const [missing, present] =
      chain === undefined
        ? [`issuer.certificateChain (${chainFile})`, `issuer.key (${keyFile})`]
        : [`issuer.key (${keyFile})`, `issuer.certificateChain (${chainFile})`];
    throw new Error(
      `${missing} is missing while ${present} exists; give both, or neither to have a local issuer CA made (keys.generate)`,
    );
  }
  if (!opts.generate) {
    warnings.push(
      `issuer.certificateChain (${chainFile}) not found and keys.generate is off: credentials carry no x5c, only a kid (HAIP 1.0 wallets want an issuer certificate)`,
    );
    return { origin: 'none', warnings };
  }
  const host = new URL(opts.issuers[0]).hostname.replace(/^\[(.*)\]$/, '$1');
  const local = await localCa(opts.credential, chainFile, host, opts.store);
  if (local.warning) warnings.push(local.warning);
  const isStore = local.where.startsWith('store key');
  return {
    ca: local.ca,
    origin: local.generated ? (isStore ? 'generated-store' : 'generated-file') : isStore ? 'store' : 'local-file',
    caFile: local.caFile,
    warnings,
  };
}

/**
 * With the local CA: gives every key of the credential set a leaf (its `x5c` member) that fits (this CA,
 * every issuer identifier, lasting past `until`), written back where the set is kept, compare-and-set, so
 * that instances starting together agree on one leaf per key. Returns the set as it is now.
 */
/** Every key of the set with a fitting leaf of the local CA (made where missing or unfit), in memory. */
export async function certifySet(
  set: { keys: KeptJwk[] },
  o: { ca: IssuerCa; issuers: string[]; until: Date },
): Promise<{ keys: KeptJwk[]; changed: boolean }> {
  let changed = false;
  const keys: KeptJwk[] = [];
  for (const jwk of set.keys) {
    if (generatedLeafFits(jwk.x5c, jwk, o.ca, o.issuers, o.until)) keys.push(jwk);
    else {
      keys.push({ ...jwk, x5c: await certifyCredentialKey(o.ca, jwk, o.issuers) });
      changed = true;
    }
  }
  return { keys, changed };
}

/** Why `npm run keys -- rotate credential` does not rotate an operator's certificate, and what to do instead. */
export function operatorRotationRefusal(cfg: IssuerConfig): string {
  return `credential: the credentials are signed with issuer.key (${cfg.key}) under issuer.certificateChain (${cfg.certificateChain}), the operator's certificate, which this command cannot issue. To rotate: put the new key and its chain at those paths, add the old leaf certificate to issuer.previousCertificates (so that the old key stays published while what it signed is valid), and restart the instances; nothing was changed`;
}

export async function certifyCredentialKeys(
  origin: KeyOrigin,
  o: { store?: Store; ca: IssuerCa; issuers: string[]; until: Date },
): Promise<{ keys: KeptJwk[]; readOnly?: string }> {
  const place = placeOf(origin, o.store);
  for (let round = 0; round < 5; round++) {
    const before = await place.read();
    const set = KINDS.credential.check(place.where, before) as { keys: KeptJwk[] };
    const { keys, changed } = await certifySet(set, o);
    if (!changed) return set;
    const written = await place.write(before, { keys }).catch((err: NodeJS.ErrnoException) => {
      // a key file mounted read-only: this instance signs under leaves of its own (same CA, same keys)
      if (err.code === 'EACCES' || err.code === 'EROFS' || err.code === 'EPERM') return 'read-only' as const;
      throw err;
    });
    if (written === 'read-only') return { keys, readOnly: place.where };
    if (written) return { keys };
  }
  throw new Error(`${place.where}: the credential keys kept changing while their certificates were made`);
}

/**
 * The credential keys with an operator's certificate: `issuer.key` signs (under its chain); the credential
 * key set and earlier leaves stay published, so that what they signed keeps verifying by `kid`.
 */
export function operatorSigningKeys(operator: { jwk: JWK; previous: JWK[] }, set: SigningKeys): SigningKeys {
  const { d: _d, x5c: _x5c, ...pub } = operator.jwk;
  let made: { from: { keys: JWK[] }; published: { keys: JWK[] } } | undefined;
  return {
    signing: () => operator.jwk,
    published() {
      const from = set.published();
      if (made?.from !== from) {
        const first = [pub, ...operator.previous];
        const kids = new Set(first.map((k) => k.kid));
        made = { from, published: { keys: [...first, ...from.keys.filter((k) => !kids.has(k.kid))] } };
      }
      return made.published;
    },
  };
}
