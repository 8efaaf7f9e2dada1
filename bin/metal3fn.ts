#!/usr/bin/env node
console.log('hello', process.version);
