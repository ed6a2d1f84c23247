import { z } from 'zod';
import { isTargetEntry } from '../../rules/addresses.js';

/**
 * Fetches of keys, metadata and status lists (src/http/outboundFetch.ts): what they may reach besides public
 * addresses. Left out: the loopback networks when `baseUrl` is on a loopback host (development), else none.
 */
export const outboundFetchSchema = z
  .object({
    /**
     * Loopback, private (RFC 1918, unique local), CGNAT, link-local or unspecified targets allowed: an IP
     * address, a CIDR network (10.20.0.0/16, fd00::/8), or a host name (allowed whatever it resolves to).
     */
    allowedPrivateTargets: z
      .array(
        z.string().refine(isTargetEntry, 'must be an IP address, a CIDR network such as 10.0.0.0/8, or a host name'),
      )
      .optional(),
  })
  .strict()
  .prefault({});
