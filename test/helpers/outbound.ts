import { LOOPBACK_TARGETS, OutboundFetch } from '../../src/http/outboundFetch.js';

/**
 * The outbound rules of a service on a loopback base URL (development): the tests' own servers run on
 * 127.0.0.1, which the rules refuse unless allowed (src/http/outboundFetch.ts).
 */
export const loopbackOutbound = (): OutboundFetch => new OutboundFetch({ allowedPrivateTargets: LOOPBACK_TARGETS });
