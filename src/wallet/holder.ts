import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { WalletError } from './errors.js';
import { createProof, requestCredential, requestNonce, requestToken } from './issuance.js';
import { authorizationServerFor, fetchAuthorizationServerMetadata, fetchIssuerMetadata } from './metadata.js';
import { checkPin, resolveOffer } from './offer.js';
import { verifyReceivedCredential } from './verifyCredential.js';
import { readWalletFile, writeWalletFile, type StoredCredential, type WalletContents } from './walletFile.js';

export type { StoredCredential } from './walletFile.js';
export { WalletError } from './errors.js';

/**
 * The dev wallet (D11): receives SD-JWT VCs over OpenID4VCI 1.0 (pre-authorized code flow, with PIN) and
 * keeps them, with one holder key per credential, in a local file. It speaks only the open standards, so
 * it works against any conformant issuer; the server never depends on it.
 */
export class DevWallet {
  readonly #file: string;
  #contents: WalletContents;

  private constructor(file: string, contents: WalletContents) {
    this.#file = file;
    this.#contents = contents;
  }

  static async open(file: string): Promise<DevWallet> {
    return new DevWallet(file, await readWalletFile(file));
  }

  list(): StoredCredential[] {
    return structuredClone(this.#contents.credentials);
  }

  /**
   * Offer → metadata → token (with the PIN as `tx_code`) → nonce → proof with a fresh holder key →
   * credential → independent verification → stored. Issuer errors surface as "error: description".
   */
  async receive(offerUri: string, opts: { pin?: string; fetch?: typeof fetch } = {}): Promise<StoredCredential> {
    const fetchImpl = opts.fetch ?? fetch;
    const offer = await resolveOffer(offerUri, fetchImpl);
    checkPin(offer.txCode, opts.pin);

    const issuerMetadata = await fetchIssuerMetadata(offer.credentialIssuer, fetchImpl);
    const configurationId = offer.credentialConfigurationIds[0];
    const configuration = issuerMetadata.credential_configurations_supported[configurationId];
    if (!configuration) throw new WalletError(`the issuer does not describe the offered credential ${configurationId}`);
    if (configuration.format !== 'dc+sd-jwt') throw new WalletError(`credential format ${String(configuration.format)} is not supported; the dev wallet takes dc+sd-jwt`);

    const authorizationServer = authorizationServerFor(issuerMetadata, offer.authorizationServer);
    const asMetadata = await fetchAuthorizationServerMetadata(authorizationServer, fetchImpl);
    const token = await requestToken(asMetadata.token_endpoint, { preAuthorizedCode: offer.preAuthorizedCode, txCode: opts.pin }, fetchImpl);
    const nonce = issuerMetadata.nonce_endpoint ? await requestNonce(issuerMetadata.nonce_endpoint, fetchImpl) : token.cNonce;

    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const holderPublicJwk = await exportJWK(publicKey);
    const proof = await createProof({ holderPrivateKey: privateKey, holderPublicJwk, audience: offer.credentialIssuer, nonce });
    const credential = await requestCredential(
      issuerMetadata.credential_endpoint,
      { accessToken: token.accessToken, tokenType: token.tokenType, credentialConfigurationId: configurationId, proof },
      fetchImpl,
    );

    const verified = await verifyReceivedCredential(credential, { credentialIssuer: offer.credentialIssuer, vct: configuration.vct, holderPublicJwk }, fetchImpl);
    const stored: StoredCredential = {
      id: randomUUID(),
      format: 'dc+sd-jwt',
      credential,
      issuer: verified.issuer,
      vct: verified.vct,
      receivedAt: new Date().toISOString(),
      holderKey: await exportJWK(privateKey),
      claims: verified.claims,
    };
    const contents = await readWalletFile(this.#file); // another process may have added to the file
    contents.credentials.push(stored);
    await writeWalletFile(this.#file, contents);
    this.#contents = contents;
    return structuredClone(stored);
  }
}
