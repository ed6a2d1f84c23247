import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { readText, writeNew } from './files.js';
import { dirname, join, resolve } from 'node:path';
import type { JWK } from 'jose';
import type { IssuerConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import {
  certifyCredentialKey,
  checkIssuerFiles,
  documentSignerFits,
  documentSignerKey,
  generateDocumentSigner,
  generateIssuerCa,
  generatedLeafFits,
  isIssuerCa,
  previousCertificateKey,
  type DocumentSignerKey,
  type IssuerCa,
} from './issuerCertificate.js';
import { KINDS, type KeptJwk, type KeyOrigin } from './keys.js';
import type { SigningKeys } from './keyRing.js';
import { placeOf } from './rotate.js';

/** The store key of a generated local issuer CA (one for every instance, as the key sets, D20). */
export const ISSUER_CA_STORE_KEY = 'keys:issuer-ca';

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

/** The store key of the document signer made by the local CA for the credential key `kid`. */
export const documentSignerStoreKey = (kid: string) => `keys:document-signer:${kid}`;

/** Where the mdoc signer gets its document signer (ISO/IEC 18013-5 Annex B.1.4): read when it signs. */
export interface DocumentSigners {
  current(): Promise<DocumentSignerKey>;
}

/** The CA's key and certificate in one file, so that two instances starting together cannot mix two CAs. */
const caFileText = (ca: IssuerCa) => `${ca.key}${ca.certificate}`;
function caOfFile(text: string, where: string): IssuerCa {
  const key = /-----BEGIN PRIVATE KEY-----[^-]+-----END PRIVATE KEY-----\n?/.exec(text)?.[0];
  const certificate = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n?/.exec(text)?.[0];
  if (!key || !certificate)
    throw new Error(`${where}: not a local issuer CA (a PKCS#8 private key and its certificate)`);
  return { key, certificate };
}

/**
 * The local issuer CA, kept where the credential keys are (D20): in the store when the set is there (every
 * instance certifies with one CA), else beside the configured chain as issuer-ca-key.pem (secret) and
 * issuer-ca.pem (the certificate wallets must trust). The first writer wins.
 */
async function localCa(
  credential: KeyOrigin,
  chainFile: string,
  host: string,
  store?: Store,
): Promise<{ ca: IssuerCa; generated: boolean; caFile: string; where: string }> {
  const caFile = join(dirname(chainFile), 'issuer-ca.pem');
  let ca: IssuerCa;
  let generated = false;
  let where: string;
  if (credential.origin === 'store' || credential.origin === 'generated-store') {
    if (!store) throw new Error('issuer: the credential keys are in the store, which is not open');
    where = `store key ${ISSUER_CA_STORE_KEY}`;
    let held = await store.get<unknown>(ISSUER_CA_STORE_KEY);
    if (held === undefined) {
      const candidate = await generateIssuerCa(host);
      generated = await store.setPermanentIfAbsent(ISSUER_CA_STORE_KEY, candidate);
      held = generated ? candidate : await store.get<unknown>(ISSUER_CA_STORE_KEY);
    }
    if (!isIssuerCa(held)) throw new Error(`${where}: not a local issuer CA`);
    ca = held;
  } else {
    const keyFile = join(dirname(chainFile), 'issuer-ca-key.pem');
    where = keyFile;
    let text = await readText(keyFile);
    if (text === undefined) {
      await writeNew(keyFile, caFileText(await generateIssuerCa(host)), 0o600);
      text = await readFile(keyFile, 'utf8');
      generated = true;
    }
    ca = caOfFile(text, keyFile);
  }
  // the certificate is public: written (again) where a developer looks for it
  if ((await readText(caFile)) !== ca.certificate) {
    await mkdir(dirname(caFile), { recursive: true, mode: 0o700 });
    await writeFile(caFile, ca.certificate, { mode: 0o644 });
  }
  return { ca, generated, caFile, where };
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
  const isStore = local.where.startsWith('store key');
  return {
    ca: local.ca,
    origin: local.generated ? (isStore ? 'generated-store' : 'generated-file') : isStore ? 'store' : 'local-file',
    caFile: local.caFile,
    warnings,
  };
}

/**
 * With the local CA: one mdoc document signer per credential key, made by the first instance that signs an
 * mdoc with that key and kept where the CA is (the store on Redis, a file beside issuer-ca.pem otherwise).
 * A rotation of the credential key (`npm run keys -- rotate credential`) so brings a new document signer
 * with the new key; one that would end before an mdoc signed now (`validForMs`) is remade.
 */
export function localDocumentSigners(o: {
  ca: IssuerCa;
  credential: KeyOrigin;
  /** issuer.certificateChain, resolved: the files go beside it */
  chainFile: string;
  host: string;
  store?: Store;
  /** the kid of the credential key that signs now */
  activeKid: () => string | undefined;
  validForMs: number;
}): DocumentSigners {
  const inStore = o.credential.origin === 'store' || o.credential.origin === 'generated-store';
  const held = new Map<string, Promise<DocumentSignerKey>>();

  async function load(kid: string): Promise<DocumentSignerKey> {
    const until = new Date(Date.now() + o.validForMs);
    let record: unknown;
    let where: string;
    if (inStore) {
      if (!o.store) throw new Error('issuer: the credential keys are in the store, which is not open');
      const key = documentSignerStoreKey(kid);
      where = `store key ${key}`;
      const before = await o.store.get<unknown>(key);
      if (!documentSignerFits(before, o.ca, until)) {
        const candidate = await generateDocumentSigner(o.ca, o.host, new Date(), o.validForMs);
        // compare-and-set: of instances remaking it together, one signer stays
        if (before === undefined) await o.store.setPermanentIfAbsent(key, candidate);
        else await o.store.replacePermanent(key, before, candidate);
      }
      record = await o.store.get<unknown>(key);
    } else {
      const file = join(dirname(o.chainFile), 'document-signers', `${kid.replace(/[^A-Za-z0-9_-]/g, '_')}.pem`);
      where = file;
      const text = await readText(file);
      const before = text === undefined ? undefined : signerOfFile(text);
      if (!documentSignerFits(before, o.ca, until)) {
        const candidate = caFileText(await generateDocumentSigner(o.ca, o.host, new Date(), o.validForMs));
        if (text === undefined) await writeNew(file, candidate, 0o600);
        else await writeFile(file, candidate, { mode: 0o600 });
      }
      record = signerOfFile((await readText(file)) ?? '');
    }
    if (!isIssuerCa(record))
      throw new Error(`${where}: not a document signer (a PKCS#8 private key and its certificate)`);
    return documentSignerKey({ chain: record.certificate, key: record.key }, { chain: where, key: where });
  }

  return {
    async current() {
      const kid = o.activeKid() ?? 'credential';
      const kept = held.get(kid);
      // kept until it would end before an mdoc signed now: then read (and remade) again
      if (kept) {
        const signer = await kept.catch(() => undefined);
        if (signer && signer.expires.getTime() >= Date.now() + o.validForMs) return signer;
      }
      const loading = load(kid);
      held.set(kid, loading);
      loading.catch(() => held.delete(kid)); // a failed read is tried again at the next mdoc
      return loading;
    },
  };
}

/**
 * The document signers of our mdocs: the operator's `issuer.documentSigner`, else with the local CA one per
 * credential key (`localDocumentSigners`), else none (credential types are offered as SD-JWT VCs only).
 */
export function documentSignersOf(
  identity: IssuerIdentity,
  o: {
    cfg: IssuerConfig;
    baseDir: string;
    credential: KeyOrigin;
    issuers: string[];
    store?: Store;
    activeKid: () => string | undefined;
    validForMs: number;
  },
): DocumentSigners | undefined {
  const fixed = identity.documentSigner;
  if (fixed) return { current: () => Promise.resolve(fixed) };
  if (!identity.ca) return undefined;
  const host = new URL(o.issuers[0]).hostname.replace(/^\[(.*)\]$/, '$1');
  return localDocumentSigners({
    ca: identity.ca,
    credential: o.credential,
    chainFile: resolve(o.baseDir, o.cfg.certificateChain),
    host,
    store: o.store,
    activeKid: o.activeKid,
    validForMs: o.validForMs,
  });
}

function signerOfFile(text: string): IssuerCa | undefined {
  try {
    return caOfFile(text, 'document signer');
  } catch {
    return undefined;
  }
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
