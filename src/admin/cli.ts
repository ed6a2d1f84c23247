import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { createStore } from '../store/create.js';
import { StatusRegistry } from '../status/registry.js';
import { ACTIONS, changeStatus, reachesOurVerifierOnly, withoutStatusDescription, type Action } from './credentials.js';

export const ADMIN_USAGE = `Usage:
  npm run admin -- revoke SERIAL-NUMBER [--config FILE]     revoke a credential (final)
  npm run admin -- suspend SERIAL-NUMBER [--config FILE]    suspend it
  npm run admin -- reinstate SERIAL-NUMBER [--config FILE]  lift a suspension
  npm run admin -- status SERIAL-NUMBER [--config FILE]     show its status
SERIAL-NUMBER is the SerialNumber of the issuance's ID token. The config file is the servers' (default
config/demo.yaml, or $CONFIG); its store must be Redis. The change shows in the Status List Token at once.
An mdoc carries no status: revoking or suspending one reaches this service's verifier only (exit code 3).`;

/**
 * `npm run admin`: the operator API's actions from the command line (D18), on the store the servers share.
 * Exit codes: 0 done, 1 cannot (memory store, unknown SerialNumber, revoked already, store unreachable), 2 usage,
 * 3 done for this service's verifier only (an mdoc, which carries no status: other verifiers accept it until it expires).
 */
export async function adminCommand(args: string[], defaultConfig: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${ADMIN_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(ADMIN_USAGE);
    return 0;
  }
  const [sub, serialNumber, ...extra] = positionals;
  const known = sub === 'status' || (sub !== undefined && Object.hasOwn(ACTIONS, sub));
  if (!known || !serialNumber || extra.length) {
    console.error(
      `${!sub ? 'admin needs a command' : !known ? `unknown admin command: ${sub}` : !serialNumber ? `${sub} needs a SerialNumber` : `${sub} takes one SerialNumber`}\n${ADMIN_USAGE}`,
    );
    return 2;
  }

  const loaded = await loadConfig(values.config ?? defaultConfig);
  const { config } = loaded;
  if (config.store === 'memory') {
    console.error(
      `${loaded.file}: store: memory. The memory store belongs to one process, so this command cannot reach a running server's credentials. Use the Redis store the servers share, or the server's API (POST /admin/credentials/SERIAL-NUMBER/${sub === 'status' ? 'revoke' : sub} with admin.token).`,
    );
    return 1;
  }
  const store = await createStore(config.store);
  try {
    try {
      await store.ping();
    } catch {
      console.error(`${loaded.file}: cannot reach the store (Redis); nothing was changed`);
      return 1;
    }
    const registry = new StatusRegistry(store, config.statusList.size, config.walletPath);
    if (sub === 'status') {
      const found = await registry.status(serialNumber);
      if (!found) return unknown(serialNumber);
      const mdoc =
        found.format === 'mso_mdoc' ? "; an mdoc without status: only this service's verifier applies it" : '';
      console.log(`${serialNumber}: ${found.status} (expires ${new Date(found.exp * 1000).toISOString()}${mdoc})`);
      return 0;
    }
    // the audit line goes to stderr, as the servers' logs go to their output
    const outcome = await changeStatus(
      registry,
      createLogger(config.logLevel, process.stderr),
      serialNumber,
      sub as Action,
      'cli',
    );
    if (outcome.kind === 'unknown') return unknown(serialNumber);
    if (outcome.kind === 'final') {
      console.error(`${serialNumber}: revoked, which is final; nothing was changed`);
      return 1;
    }
    if (reachesOurVerifierOnly(outcome)) {
      console.error(withoutStatusDescription(printable(serialNumber), outcome));
      return 3;
    }
    console.log(`${serialNumber}: ${outcome.status}${outcome.changed ? '' : ' (it already was)'}`);
    return 0;
  } finally {
    await store.close();
  }
}

function unknown(serialNumber: string): number {
  console.error(`no credential with SerialNumber ${printable(serialNumber)} is known (never issued here, or expired)`);
  return 1;
}

const printable = (serialNumber: string) => serialNumber.replace(/[\u0000-\u001f\u007f]/g, '?');
