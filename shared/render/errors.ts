/**
 * Rendering errors: bad user input in a Metal3DataTemplate (or an object it reads), never
 * transient. `field` is the template path at fault, e.g.
 * `spec.networkData.links.vlans[0].vlanID`, and the message always starts with it so the text
 * recorded on the Metal3Data (`status.errorMessage`) says where to look.
 */
export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly field: string;
  /** The problem without the field prefix. */
  readonly detail: string;
  constructor(field: string, detail: string) {
    super(`${field}: ${detail}`);
    this.field = field;
    this.detail = detail;
  }
}
