import { createHash, timingSafeEqual } from 'node:crypto';
import type { ClientConfig } from '../config/schema.js';
import { ProtocolError } from './errors.js';
import { isAbsent } from './text.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** the configured secret's digest, computed once per client */
const secretDigests = new WeakMap<ClientConfig, Buffer>();
function secretDigest(client: ClientConfig): Buffer {
  let digest = secretDigests.get(client);
  if (!digest) secretDigests.set(client, (digest = sha256(client.clientSecret)));
  return digest;
}

/**
 * client_secret_post authentication at PAR and token (spec Authentication 1; Errors: ClientId /
 * ClientSecret -> unauthorised_client; D4).
 */
export function authenticateClient(
  params: { client_id?: unknown; client_secret?: unknown },
  clients: ReadonlyMap<string, ClientConfig>,
): ClientConfig {
  // spec Endpoints: client_id required
  if (isAbsent(params.client_id) || typeof params.client_id !== 'string') {
    throw new ProtocolError('unauthorised_client', 'client_id is required');
  }
  // spec Errors: ClientId "Client not registered" -> unauthorised_client
  const client = clients.get(params.client_id);
  if (!client) throw new ProtocolError('unauthorised_client', 'client_id is not a registered client');
  // spec Errors: ClientSecret "Client authentication fails" -> unauthorised_client; compared in
  // constant time over SHA-256 digests so neither content nor length leaks
  const given = typeof params.client_secret === 'string' ? params.client_secret : '';
  const ok = timingSafeEqual(sha256(given), secretDigest(client));
  if (!ok || given === '') {
    throw new ProtocolError('unauthorised_client', 'client authentication failed: client_secret is missing or wrong');
  }
  return client;
}
