/**
 * Typed errors of IP arithmetic and allocation. `code` is for programs, `message` is the text
 * recorded on the IPClaim (`status.errorMessage`), so the allocation messages are exactly the
 * ip-address-manager ones.
 */
export type IpamErrorCode =
  /** Not an IPv4/IPv6 address in text form. */
  | 'InvalidAddress'
  /** Not a CIDR (`<ip>/<prefix>`), or a prefix out of range for its family. */
  | 'InvalidCidr'
  | 'InvalidPrefix'
  /** A pool entry that cannot be used as written (bad start/end/subnet, mixed families). */
  | 'InvalidPool'
  /** The claim's `ipAddress` annotation is not an IP address. */
  | 'InvalidRequestedAddress'
  | 'PreAllocationOutOfBounds'
  | 'PreAllocationConflict'
  | 'RequestedAddressNotAvailable'
  | 'Exhausted';

/** Allocation errors whose message IPAM writes to the claim; sticky until the claim changes. */
export const IPAM_MESSAGES = {
  PreAllocationOutOfBounds: 'Pre-allocated IP out of bounds',
  PreAllocationConflict: 'PreAllocation and requested ip address are conflicting',
  RequestedAddressNotAvailable: 'Requested IP not available',
  Exhausted: 'Exhausted IP Pools',
} as const;

export class IpamError extends Error {
  override readonly name = 'IpamError';
  readonly code: IpamErrorCode;
  constructor(code: IpamErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
