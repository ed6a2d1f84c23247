// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/** RFC 5280 §4.2.1.10 */
const NAME_CONSTRAINTS = '2.5.29.30';
/** GeneralName tags (RFC 5280 §4.2.1.6) */
const DNS_NAME = 2 as const;
const URI = 6 as const;
const IP_ADDRESS = 7 as const;

/** An address as the iPAddress of a GeneralName encodes it (4 or 16 bytes), read by @peculiar/x509. */
function addressBytes(ip: string): Uint8Array {
  const der = new x509.GeneralName('ip', ip).rawData;
  const parsed = asn1js.fromBER(der).result as asn1js.Primitive;
  return new Uint8Array(parsed.valueBlock.valueHexView);
}

/** An iPAddress subtree: the address and its mask (`bits` leading ones), RFC 5280 §4.2.1.10. */
function ipSubtree(address: Uint8Array, bits: number): pkijs.GeneralSubtree {
  const mask = address.map((_, i) => (bits >= 8 * (i + 1) ? 0xff : bits <= 8 * i ? 0 : 0xff << (8 - (bits % 8))));
  const value = new asn1js.OctetString({ valueHex: new Uint8Array([...address, ...mask]).buffer });
  return new pkijs.GeneralSubtree({ base: new pkijs.GeneralName({ type: IP_ADDRESS, value }) });
}

const nameSubtree = (type: typeof DNS_NAME | typeof URI, value: string) =>
  new pkijs.GeneralSubtree({ base: new pkijs.GeneralName({ type, value }) });

/**
 * Name constraints (RFC 5280 §4.2.1.10, critical) that hold a development CA to one host, the base URL's,
 * so that a CA a developer installs on a phone cannot vouch for any other name if its key leaks:
 * - a DNS host: permitted dNSName and URI host `host` (and the names under it); no iPAddress at all
 *   (0.0.0.0/0 and ::/0 excluded);
 * - an IP host: permitted iPAddress `host` alone (/32, /128); no DNS name at all (a zero-length dNSName
 *   excluded, as the CA/Browser Forum's Baseline Requirements §7.1.2.5.2 write it for technically
 *   constrained CAs). URIs stay unconstrained: RFC 5280 writes a URI constraint as a host name.
 */
export function hostNameConstraints(host: string): x509.Extension {
  const ip = isIP(host);
  const constraints = ip
    ? new pkijs.NameConstraints({
        permittedSubtrees: [ipSubtree(addressBytes(host), ip === 4 ? 32 : 128)],
        excludedSubtrees: [nameSubtree(DNS_NAME, '')],
      })
    : new pkijs.NameConstraints({
        permittedSubtrees: [nameSubtree(DNS_NAME, host), nameSubtree(URI, host)],
        excludedSubtrees: [ipSubtree(new Uint8Array(4), 0), ipSubtree(new Uint8Array(16), 0)],
      });
  return new x509.Extension(NAME_CONSTRAINTS, true, constraints.toSchema().toBER());
}

/**
 * Whether a CA's name constraints permit `host` (a DNS name or an IP address): `undefined` when the
 * certificate has none (a CA made before they were), else whether a permitted dNSName or iPAddress
 * subtree names it.
 */
export function permitsHost(caPem: string, host: string): boolean | undefined {
  const ca = new x509.X509Certificate(caPem);
  const ext = ca.getExtension(NAME_CONSTRAINTS);
  if (!ext) return undefined;
  const parsed = new pkijs.NameConstraints({ schema: asn1js.fromBER(ext.value).result });
  const permitted = parsed.permittedSubtrees ?? [];
  if (isIP(host)) {
    const address = addressBytes(host);
    return permitted.some((s) => {
      if (s.base.type !== IP_ADDRESS) return false;
      const bytes = (s.base.value as asn1js.OctetString).valueBlock.valueHexView;
      return (
        bytes.length === 2 * address.length && address.every((b, i) => (b & bytes[i + address.length]) === bytes[i])
      );
    });
  }
  const name = host.toLowerCase();
  return permitted.some((s) => {
    if (s.base.type !== DNS_NAME) return false;
    const base = String(s.base.value).toLowerCase();
    return name === base || name.endsWith(`.${base}`);
  });
}
