/**
 * Gives an oidc-provider model its id now, as its `save()` would (the provider's own generator, so its
 * `formats` settings apply), so that the records naming it can be written together with it: one store
 * round trip for the lot instead of one after another.
 */
export function assignId(model: { jti: string }): string {
  model.jti ||= (model as unknown as { generateTokenId(): string }).generateTokenId();
  return model.jti;
}
