import { describe, expect, it } from 'vitest';
import { imageOfOSImage, resolveImageSource } from '../../../shared/vmetal/image.ts';
import { inputError, waitError } from './helpers.ts';

const URL_ = 'metal3.vcluster.com/image-url';
const SUM = 'metal3.vcluster.com/image-checksum';
const TYPE = 'metal3.vcluster.com/image-checksum-type';
const OS = 'vcluster.com/os-image';

describe('resolveImageSource', () => {
  it.each([
    [
      { [OS]: 'ubuntu-24', [URL_]: 'http://x/i.qcow2' },
      { kind: 'osImage', name: 'ubuntu-24' },
    ],
    [
      { [URL_]: 'http://img/ubuntu.qcow2', [SUM]: 'http://img/ubuntu.qcow2.sha256', [TYPE]: 'sha256' },
      {
        kind: 'properties',
        image: {
          url: 'http://img/ubuntu.qcow2',
          checksum: 'http://img/ubuntu.qcow2.sha256',
          checksumType: 'sha256',
        },
      },
    ],
    [
      { [URL_]: ' https://img/u.raw ', [SUM]: 'abc' },
      { kind: 'properties', image: { url: 'https://img/u.raw', checksum: 'abc' } },
    ],
    [
      { [OS]: '', [URL_]: 'file:///images/u.raw', [SUM]: 'abc' },
      { kind: 'properties', image: { url: 'file:///images/u.raw', checksum: 'abc' } },
    ],
  ])('%j', (props, expected) => {
    expect(resolveImageSource(props)).toEqual(expected);
  });

  it.each([
    [{}, 'properties["vcluster.com/os-image"]'],
    [{ [OS]: 'Bad_Name' }, 'properties["vcluster.com/os-image"]'],
    [{ [URL_]: 'not a url', [SUM]: 'x' }, 'properties["metal3.vcluster.com/image-url"]'],
    [{ [URL_]: 'http://x/i' }, 'properties["metal3.vcluster.com/image-checksum"]'],
    [
      { [URL_]: 'http://x/i', [SUM]: 'x', [TYPE]: 'crc32' },
      'properties["metal3.vcluster.com/image-checksum-type"]',
    ],
  ])('refuses %j', (props, field) => {
    const e = inputError(() => resolveImageSource(props));
    expect(e.field).toBe(field);
  });
});

describe('imageOfOSImage', () => {
  it('reads the OSImage properties', () => {
    expect(
      imageOfOSImage('ubuntu-24', {
        metadata: { name: 'ubuntu-24' },
        spec: { properties: { [URL_]: 'http://x/u.qcow2', [SUM]: 'abc', [TYPE]: 'md5' } },
      }),
    ).toEqual({ url: 'http://x/u.qcow2', checksum: 'abc', checksumType: 'md5' });
  });
  it('a missing OSImage is a wait naming it', () => {
    const e = waitError(() => imageOfOSImage('ubuntu-24', undefined));
    expect(e.reason).toBe('OSImageNotFound');
    expect(e.object).toEqual({ kind: 'OSImage', name: 'ubuntu-24' });
    expect(e.message).toBe('OSImage ubuntu-24 not found (vcluster.com/os-image)');
  });
  it.each([
    [{}, 'OSImage u spec.properties["metal3.vcluster.com/image-url"]'],
    [
      { properties: { [URL_]: 'http://x' } },
      'OSImage u spec.properties["metal3.vcluster.com/image-checksum"]',
    ],
  ])('an OSImage without %j is bad input', (spec, field) => {
    const e = inputError(() => imageOfOSImage('u', { metadata: { name: 'u' }, spec }));
    expect(e.field).toBe(field);
  });
});
