import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { IssuerConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { readText, writeNew } from './files.js';
import {
  documentSignerFits,
  documentSignerKey,
  generateDocumentSigner,
  isIssuerCa,
  type DocumentSignerKey,
  type IssuerCa,
} from './issuerCertificate.js';
import type { IssuerIdentity } from './issuerIdentity.js';
import type { KeyOrigin } from './keys.js';
import { caFileText, caOfFile } from './localCa.js';

/** The store key of the document signer made by the local CA for the credential key `kid`. */
export const documentSignerStoreKey = (kid: string) => `keys:document-signer:${kid}`;

/** Where the mdoc signer gets its document signer (ISO/IEC 18013-5 Annex B.1.4): read when it signs. */
export interface DocumentSigners {
  current(): Promise<DocumentSignerKey>;
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
