import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { DEMO_PID_PATH, DEMO_PID_TYPE } from '../demo/pid.js';
import { credentialExpiry } from '../rules/validity.js';
import { createStore } from '../store/create.js';
import type { Store } from '../store/types.js';
import { keepPeriods, ROTATING, type RotatingSet } from './keyRing.js';
import { resolve } from 'node:path';
import type { JWK } from 'jose';
import { generateKeyFile, KINDS, loadKeys, type KeyOrigin, type KeySetName } from './keys.js';
import { listKeys, rotateKeySet, RotationRefused } from './rotate.js';
import { certifyCredentialKey } from './issuerCertificate.js';
import { loadIssuerIdentity, operatorRotationRefusal, signingIssuers } from './issuerIdentity.js';

export const KEYS_USAGE = `Usage:
  npm run keys -- rotate idToken|credential|cookies [--config FILE] [--activate-after DURATION]
      add a new key: every instance publishes it (and verifies with it) within keys.rotation.reloadInterval,
      and signs with it from keys.rotation.activateAfter on (default PT1H; longer than any JWKS cache)
      (credential: the local issuer CA certifies the new key; an operator's issuer.certificateChain is
      replaced by the operator, see docs/operations.md)
  npm run keys -- list [--config FILE]
      each key, its state (pending, active, retired, expired) and dates
  npm run keys -- generate idToken|credential|cookies|pairwise [--config FILE]
      write a new set into its configured key file (0600), for deployments that manage their own key
      files (keys.generate: false); refused when the file exists
The config file is the servers' (default config/demo.yaml, or $CONFIG). Key files are rewritten in place;
keys the servers generated into Redis are changed there.`;

type Usage = (message: string) => number;
type Loaded = Awaited<ReturnType<typeof loadConfig>>;

/** `npm run keys`. Exit codes: 0 done, 1 cannot (a key pending already, store unreachable), 2 usage. */
export async function keysCommand(args: string[], defaultConfig: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        config: { type: 'string', short: 'c' },
        'activate-after': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${KEYS_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(KEYS_USAGE);
    return 0;
  }
  const [sub, set, ...extra] = positionals;
  const usage: Usage = (message) => (console.error(`${message}\n${KEYS_USAGE}`), 2);
  if (sub !== 'rotate' && sub !== 'list' && sub !== 'generate')
    return usage(sub ? `unknown keys command: ${sub}` : 'keys needs a command');
  if (sub === 'generate' && (!(set in KINDS) || extra.length))
    return usage(`generate needs one of ${Object.keys(KINDS).join(', ')}`);
  if (sub === 'list' && (set || extra.length)) return usage('list takes no arguments');
  if (sub === 'rotate' && (!ROTATING.includes(set as RotatingSet) || extra.length)) {
    return usage(
      set === 'pairwise'
        ? 'the pairwise secret is never rotated: a new one would change every pairwise subject'
        : `rotate needs one of ${ROTATING.join(', ')}`,
    );
  }

  const loaded = await loadConfig(values.config ?? defaultConfig);
  if (sub === 'generate') return generateCommand(loaded, set as KeySetName);
  let activateAfterMs: number;
  try {
    const duration = values['activate-after'] ?? loaded.config.keys.rotation.activateAfter;
    const now = new Date();
    activateAfterMs = credentialExpiry(duration, now).getTime() - now.getTime();
  } catch {
    return usage(`--activate-after must be an ISO 8601 duration such as PT1H`);
  }
  return withStore(loaded, (ctx) =>
    sub === 'list' ? listCommand(ctx) : rotateCommand(loaded, ctx, set as RotatingSet, activateAfterMs),
  );
}

/** `generate`: a new set written into its configured key file, refused when the file exists. */
async function generateCommand(loaded: Loaded, set: KeySetName): Promise<number> {
  const file = resolve(loaded.baseDir, loaded.config.keys[set]);
  try {
    await generateKeyFile(set, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    console.error(`${file} exists: nothing was changed (to add a key to a set in use: npm run keys -- rotate ${set})`);
    return 1;
  }
  console.log(`${set}: wrote ${file}`);
  return 0;
}

interface StoreContext {
  store?: Store;
  origins: KeyOrigin[];
  keep: ReturnType<typeof keepPeriods>;
}

/** Opens the store (when the config has one), finds the key sets, runs `run`, and closes the store. */
async function withStore(loaded: Loaded, run: (ctx: StoreContext) => Promise<number>): Promise<number> {
  const { config } = loaded;
  const store: Store | undefined = config.store === 'memory' ? undefined : await createStore(config.store);
  try {
    if (store) {
      try {
        await store.ping();
      } catch {
        console.error(`${loaded.file}: cannot reach the store (Redis); nothing was changed`);
        return 1;
      }
    }
    // where the servers found each set (a key file, else the store), and with keys.generate the set a
    // first start would generate
    const { origins } = await loadKeys(config.keys, loaded.baseDir, { shared: store });
    const keep = keepPeriods(config, config.demo ? [DEMO_PID_TYPE.validity] : []);
    return await run({ store, origins, keep });
  } catch (err) {
    if (err instanceof RotationRefused) {
      console.error(err.message);
      return 1;
    }
    throw err;
  } finally {
    await store?.close();
  }
}

/** `list`: each key, its state and dates. */
async function listCommand({ store, origins, keep }: StoreContext): Promise<number> {
  for (const { where, rows } of await listKeys(origins, { store, keep })) {
    console.log(`${rows[0].set} (${where})`);
    for (const { name, view } of rows) {
      const dates = [
        view.activates && `signs from ${view.activates.toISOString()}`,
        view.retired && `retired ${view.retired.toISOString()}`,
        view.removed &&
          `${view.state === 'expired' ? 'unpublished since' : 'published until'} ${view.removed.toISOString()}`,
        view.state === 'retired' && !view.removed && 'kept until removed from the set by hand',
      ].filter(Boolean);
      console.log(`  ${view.state.padEnd(8)} ${name}${dates.length ? `  ${dates.join(', ')}` : ''}`);
    }
  }
  return 0;
}

/** `rotate`: a new key added to the set (with the credential set, certified by the local issuer CA). */
async function rotateCommand(
  loaded: Loaded,
  { store, origins, keep }: StoreContext,
  set: RotatingSet,
  activateAfterMs: number,
): Promise<number> {
  const { config } = loaded;
  const origin = origins.find((o) => o.set === set)!;
  let certify: ((jwk: JWK) => Promise<string[]>) | undefined;
  if (set === 'credential') {
    // the issuer certificate rotates with the key: the local CA certifies the new key; an
    // operator's certificate is the operator's to replace
    const issuers = signingIssuers(config, DEMO_PID_PATH);
    const identity = await loadIssuerIdentity(config.issuer, {
      baseDir: loaded.baseDir,
      generate: config.keys.generate,
      issuers,
      credential: origin,
      store,
      until: new Date(Date.now() + keep.credential),
    });
    if (identity.operator) throw new RotationRefused(operatorRotationRefusal(config.issuer));
    const ca = identity.ca;
    if (ca) certify = (jwk) => certifyCredentialKey(ca, jwk, issuers);
  }
  const result = await rotateKeySet(set, origin, { store, keep, activateAfterMs, certify });
  console.log(
    `${set}: added ${result.added} in ${result.where}; published now, signs from ${result.activates.toISOString()}`,
  );
  if (certify) console.log(`${set}: the local issuer CA certified the new key (its x5c leaf goes with it)`);
  if (result.removed.length) console.log(`${set}: removed ${result.removed.join(', ')} (past its keep period)`);
  return 0;
}
