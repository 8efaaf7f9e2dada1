/**
 * /openapi/v2 as much as kubectl needs. kubectl asks for the protobuf form; an empty protobuf
 * message is a valid empty openapi_v2.Document, in which no kind is found, so kubectl skips
 * client-side schema validation (the server validates). /openapi/v3 is not served (404), which
 * makes kubectl fall back to v2.
 */
export function openapiV2(accept: string | undefined): { type: string; body: string | Buffer } {
  if (accept?.includes('protobuf')) {
    return { type: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', body: Buffer.alloc(0) };
  }
  return {
    type: 'application/json',
    body: JSON.stringify({
      swagger: '2.0',
      info: { title: 'Kubernetes', version: 'v1.32.0+metal3fn' },
      paths: {},
      definitions: {},
    }),
  };
}
