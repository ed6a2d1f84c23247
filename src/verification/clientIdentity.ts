import { readFile } from 'node:fs/promises';
import { readText, writeNew } from '../keys/files.js';
import { dirname, join, resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import type { VerifierConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { isLoopbackHost } from '../rules/loopback.js';
import {
  checkTrustAnchors,
  checkVerifierChain,
  dnsNames,
  generateVerifierCertificates,
  readPemCertificates,
  readPemPrivateKey,
  x509Hash,
  type VerifierCertificates,
} from '../keys/x509.js';
import type { TrustAnchor } from '../keys/trustAnchors.js';

/** How the verifier identifies itself to wallets (OpenID4VP 1.0 §5.9.3) and what it trusts. */
export interface ClientIdentity {
  prefix: VerifierConfig['clientIdPrefix'];
  /** the Client Identifier with its prefix: the request's client_id and the key binding `aud` */
  clientId: string;
  /** x509 prefixes: the JWS `x5c` header (base64 DER, leaf first, no trust anchor) and the leaf's key */
  signer?: { x5c: string[]; key: KeyObject };
  /**
   * ISO/IEC 18013-7 Annex C: what signs the DeviceRequest's `readerAuth` (`verifier.readerCertificate`, else
   * the signer above): the chain (DER, leaf first) and the leaf's key; none: the DeviceRequest is unsigned
   */
  reader?: { x5chain: Uint8Array[]; key: KeyObject };
  responseMode: VerifierConfig['responseMode'];
  /** `verifier.trustAnchors`: roots of mdoc IACAs and of x5c-signed SD-JWT VCs, each for its formats and types */
  trustAnchors: TrustAnchor[];
}

/** Where the verifier's certificate came from at start-up, for the start-up log. */
export interface ClientIdentityOrigin {
  origin: 'file' | 'generated-file' | 'generated-store' | 'store' | 'none';
  /** generated: the local CA a wallet must be told to trust (written beside the chain) */
  caFile?: string;
  /** warnings an operator must read */
  warnings: string[];
}

/** The store key of a generated verifier certificate (D20: one for every instance, as the key sets). */
export const VERIFIER_STORE_KEY = 'keys:verifier';

function isCertificates(v: unknown): v is VerifierCertificates {
  const c = v as Partial<VerifierCertificates> | undefined;
  return typeof c?.caCertificate === 'string' && typeof c.chain === 'string' && typeof c.key === 'string';
}

/**
 * The verifier's certificate and key (`verifier.certificateChain`, `verifier.key`). Files that exist are used
 * as they are. With `keys.generate` and neither file, a local CA and a leaf for the base URL's host are made
 * (D20: into the shared store when there is one, so every instance signs with the same leaf and one
 * client_id; else into the files), and the CA is written beside the chain for wallets to trust.
 */
async function loadCertificates(
  cfg: VerifierConfig,
  host: string,
  baseDir: string,
  generate: boolean,
  shared?: Store,
): Promise<{
  chain: string;
  key: string;
  where: { chain: string; key: string };
  origin: ClientIdentityOrigin['origin'];
  caFile?: string;
}> {
  const chainFile = resolve(baseDir, cfg.certificateChain);
  const keyFile = resolve(baseDir, cfg.key);
  const [chain, key] = await Promise.all([readText(chainFile), readText(keyFile)]);
  if (chain !== undefined && key !== undefined)
    return { chain, key, where: { chain: chainFile, key: keyFile }, origin: 'file' };
  if (chain !== undefined || key !== undefined) {
    throw new Error(
      `verifier: ${chain === undefined ? chainFile : keyFile} is missing while ${chain === undefined ? keyFile : chainFile} exists; give both, or neither to generate them`,
    );
  }
  if (!generate) throw new Error(`verifier.certificateChain: ${chainFile} not found (keys.generate is off)`);
  const caFile = join(dirname(chainFile), 'verifier-ca.pem');
  if (shared) {
    let origin: ClientIdentityOrigin['origin'] = 'store';
    let held = await shared.get<unknown>(VERIFIER_STORE_KEY);
    if (held === undefined) {
      const candidate = await generateVerifierCertificates(host);
      if (await shared.setPermanentIfAbsent(VERIFIER_STORE_KEY, candidate)) {
        held = candidate;
        origin = 'generated-store';
      } else {
        held = await shared.get<unknown>(VERIFIER_STORE_KEY);
      }
    }
    if (!isCertificates(held)) throw new Error(`store key ${VERIFIER_STORE_KEY}: not a verifier certificate set`);
    // the CA is public: every instance writes it where a developer looks for it
    await writeNew(caFile, held.caCertificate, 0o644);
    return {
      chain: held.chain,
      key: held.key,
      where: { chain: `store key ${VERIFIER_STORE_KEY}`, key: `store key ${VERIFIER_STORE_KEY}` },
      origin,
      caFile,
    };
  }
  const made = await generateVerifierCertificates(host);
  await writeNew(keyFile, made.key, 0o600);
  await writeNew(chainFile, made.chain, 0o644);
  await writeNew(caFile, made.caCertificate, 0o644);
  const [chainBack, keyBack] = await Promise.all([readFile(chainFile, 'utf8'), readFile(keyFile, 'utf8')]);
  return {
    chain: chainBack,
    key: keyBack,
    where: { chain: chainFile, key: keyFile },
    origin: 'generated-file',
    caFile,
  };
}

/**
 * `verifier.trustAnchors`: each entry's PEM file, read and checked as anchors. The single-file
 * form is read as mdoc IACAs only, with a note saying how to write the list: before, one file was trusted
 * for every format, so a certificate under an IACA could issue SD-JWT VCs.
 */
async function loadTrustAnchors(
  cfg: VerifierConfig['trustAnchors'],
  baseDir: string,
  warnings: string[],
): Promise<TrustAnchor[]> {
  if (cfg === undefined) return [];
  const entries = typeof cfg === 'string' ? [{ certificates: cfg, formats: ['mso_mdoc' as const] }] : cfg;
  if (typeof cfg === 'string') {
    warnings.push(
      `verifier.trustAnchors: the single file ${cfg} is trusted for mdoc issuers (IACAs) only; to trust it for x5c-signed SD-JWT VCs too, write a list: trustAnchors: [{ certificates: ${cfg}, formats: [mso_mdoc, dc+sd-jwt], types: [<credential types>] }]`,
    );
  }
  const anchors: TrustAnchor[] = [];
  for (const [i, entry] of entries.entries()) {
    const where = typeof cfg === 'string' ? 'verifier.trustAnchors' : `verifier.trustAnchors[${i}].certificates`;
    const file = resolve(baseDir, entry.certificates);
    const pem = await readText(file);
    if (pem === undefined) throw new Error(`${where}: ${file} not found`);
    const certificates = readPemCertificates(pem, `${where} (${file})`);
    warnings.push(...checkTrustAnchors(certificates, `${where} (${file})`));
    anchors.push({
      certificates,
      formats: entry.formats,
      ...('types' in entry && entry.types ? { types: entry.types } : {}),
    });
  }
  return anchors;
}

/** `verifier.readerCertificate`: both files, the chain checked as the verifier's is (P-256 leaf of the key, valid, no root). */
async function loadReaderCertificate(
  cfg: NonNullable<VerifierConfig['readerCertificate']>,
  baseDir: string,
): Promise<{ x5chain: Uint8Array[]; key: KeyObject }> {
  const chainFile = resolve(baseDir, cfg.certificateChain);
  const keyFile = resolve(baseDir, cfg.key);
  const [chainPem, keyPem] = await Promise.all([readText(chainFile), readText(keyFile)]);
  if (chainPem === undefined) throw new Error(`verifier.readerCertificate.certificateChain: ${chainFile} not found`);
  if (keyPem === undefined) throw new Error(`verifier.readerCertificate.key: ${keyFile} not found`);
  const where = `verifier.readerCertificate.certificateChain (${chainFile})`;
  const x5chain = readPemCertificates(chainPem, where);
  const key = readPemPrivateKey(keyPem, `verifier.readerCertificate.key (${keyFile})`);
  await checkVerifierChain(x5chain, key, where);
  return { x5chain, key };
}

/**
 * Resolves `verifier` at start-up: the client identifier and what signs requests under it, checked as a
 * wallet will check them (HAIP 1.0: the chain without its trust anchor; `x509_san_dns`: the leaf names the
 * response URI's host), and the trust anchors.
 */
export async function loadClientIdentity(
  cfg: VerifierConfig,
  opts: { baseUrl: string; responseUri: string; baseDir: string; generate: boolean; shared?: Store },
): Promise<{ identity: ClientIdentity; origin: ClientIdentityOrigin }> {
  const host = new URL(opts.baseUrl).hostname;
  const warnings: string[] = [];
  const trustAnchors = await loadTrustAnchors(cfg.trustAnchors, opts.baseDir, warnings);
  const reader = cfg.readerCertificate ? await loadReaderCertificate(cfg.readerCertificate, opts.baseDir) : undefined;
  if (cfg.clientIdPrefix === 'redirect_uri') {
    if (!isLoopbackHost(host))
      warnings.push(
        'verifier.clientIdPrefix redirect_uri is for development only: production wallets answer x509_hash and x509_san_dns verifiers',
      );
    return {
      identity: {
        prefix: 'redirect_uri',
        clientId: `redirect_uri:${opts.responseUri}`,
        ...(reader ? { reader } : {}),
        responseMode: cfg.responseMode,
        trustAnchors,
      },
      origin: { origin: 'none', warnings },
    };
  }
  const loaded = await loadCertificates(cfg, host, opts.baseDir, opts.generate, opts.shared);
  const chain = readPemCertificates(loaded.chain, `verifier.certificateChain (${loaded.where.chain})`);
  const key = readPemPrivateKey(loaded.key, `verifier.key (${loaded.where.key})`);
  await checkVerifierChain(chain, key, `verifier.certificateChain (${loaded.where.chain})`);
  const names = dnsNames(chain[0]);
  if (cfg.clientIdPrefix === 'x509_san_dns' && !names.includes(host)) {
    // OpenID4VP 1.0 §5.9.3: the identifier is a dNSName of the leaf, and the response URI's host is that name
    throw new Error(
      `verifier.certificateChain (${loaded.where.chain}): x509_san_dns needs a leaf certificate whose subjectAltName dNSName is ${host} (the base URL's host); it names ${names.length ? names.join(', ') : 'no DNS name'}`,
    );
  }
  if (loaded.origin !== 'file' && !names.includes(host)) {
    warnings.push(
      `the generated verifier certificate (${loaded.where.chain}) names ${names.join(', ')}, not ${host}: delete it to have one made for ${host}`,
    );
  }
  const clientId = cfg.clientIdPrefix === 'x509_hash' ? `x509_hash:${x509Hash(chain[0])}` : `x509_san_dns:${host}`;
  return {
    identity: {
      prefix: cfg.clientIdPrefix,
      clientId,
      signer: { x5c: chain.map((der) => Buffer.from(der).toString('base64')), key },
      reader: reader ?? { x5chain: chain, key },
      responseMode: cfg.responseMode,
      trustAnchors,
    },
    origin: { origin: loaded.origin, ...(loaded.caFile ? { caFile: loaded.caFile } : {}), warnings },
  };
}
