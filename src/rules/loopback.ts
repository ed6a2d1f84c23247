/** Hosts that name this machine: http is allowed there, for development and tests, and nowhere else. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.has(hostname) || hostname.endsWith('.localhost');
