/** Chain parameters for every network the tool knows, by its command-line name. */
export interface Network {
  name: NetworkName;
  /** blk-file / P2P message start, as the 4 bytes appear on disk (hex). */
  magic: string;
  /** Genesis block hash, display hex. */
  genesis: string;
  /** base58check version bytes. */
  pubKeyHash: number;
  scriptHash: number | undefined;
  /** bech32 / bech32m human-readable part. */
  bech32: string;
  /** Namecoin merge-mining: parse AuxPoW when `version & 0x100`. */
  auxpow: boolean;
  /** Blocks between subsidy halvings. */
  halvingInterval: number;
  /** Name expiration depth at a height (Namecoin networks only). */
  nameExpirationDepth: ((height: number) => number) | undefined;
  /** Default JSON-RPC port and cookie location below the data dir. */
  rpcPort: number;
  cookieDir: string;
}

export type NetworkName =
  | 'bitcoin'
  | 'bitcoin-testnet'
  | 'bitcoin-testnet4'
  | 'bitcoin-signet'
  | 'bitcoin-regtest'
  | 'namecoin'
  | 'namecoin-testnet'
  | 'namecoin-regtest';

const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

/** Namecoin Core's NameExpirationDepth on mainnet and testnet. */
function namecoinMainExpiration(height: number): number {
  if (height < 24000) return 12000;
  if (height < 48000) return height - 12000;
  return 36000;
}

export const NETWORKS: Readonly<Record<NetworkName, Network>> = {
  bitcoin: {
    name: 'bitcoin',
    magic: 'f9beb4d9',
    genesis: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
    pubKeyHash: 0x00,
    scriptHash: 0x05,
    bech32: 'bc',
    auxpow: false,
    halvingInterval: 210000,
    nameExpirationDepth: undefined,
    rpcPort: 8332,
    cookieDir: '',
  },
  'bitcoin-testnet': {
    name: 'bitcoin-testnet',
    magic: '0b110907',
    genesis: '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'tb',
    auxpow: false,
    halvingInterval: 210000,
    nameExpirationDepth: undefined,
    rpcPort: 18332,
    cookieDir: 'testnet3',
  },
  'bitcoin-testnet4': {
    name: 'bitcoin-testnet4',
    magic: '1c163f28',
    genesis: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'tb',
    auxpow: false,
    halvingInterval: 210000,
    nameExpirationDepth: undefined,
    rpcPort: 48332,
    cookieDir: 'testnet4',
  },
  'bitcoin-signet': {
    name: 'bitcoin-signet',
    magic: '0a03cf40',
    genesis: '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6',
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'tb',
    auxpow: false,
    halvingInterval: 210000,
    nameExpirationDepth: undefined,
    rpcPort: 38332,
    cookieDir: 'signet',
  },
  'bitcoin-regtest': {
    name: 'bitcoin-regtest',
    magic: 'fabfb5da',
    genesis: REGTEST_GENESIS,
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'bcrt',
    auxpow: false,
    halvingInterval: 150,
    nameExpirationDepth: undefined,
    rpcPort: 18443,
    cookieDir: 'regtest',
  },
  namecoin: {
    name: 'namecoin',
    magic: 'f9beb4fe',
    genesis: '000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770',
    pubKeyHash: 0x34,
    scriptHash: 0x0d,
    bech32: 'nc',
    auxpow: true,
    halvingInterval: 210000,
    nameExpirationDepth: namecoinMainExpiration,
    rpcPort: 8336,
    cookieDir: '',
  },
  'namecoin-testnet': {
    name: 'namecoin-testnet',
    magic: 'fabfb5fe',
    genesis: '00000007199508e34a9ff81e6ec0c477a4cccff2a4767a8eee39c11db367b008',
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'tn',
    auxpow: true,
    halvingInterval: 210000,
    nameExpirationDepth: namecoinMainExpiration,
    rpcPort: 18336,
    cookieDir: 'testnet',
  },
  'namecoin-regtest': {
    name: 'namecoin-regtest',
    magic: 'fabfb5da',
    genesis: REGTEST_GENESIS,
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    bech32: 'ncrt',
    auxpow: true,
    halvingInterval: 150,
    nameExpirationDepth: () => 30,
    rpcPort: 18445,
    cookieDir: 'regtest',
  },
};

const ALIASES: Readonly<Record<string, NetworkName>> = { regtest: 'bitcoin-regtest' };

export function isNamecoin(net: Network): boolean {
  return net.nameExpirationDepth !== undefined;
}

/** Looks a network up by its command-line name (or alias); throws listing the valid names. */
export function getNetwork(name: string): Network {
  const key = (ALIASES[name] ?? name) as NetworkName;
  const net = NETWORKS[key];
  if (!net) {
    throw new Error(`Unknown network "${name}"; expected one of: ${[...Object.keys(NETWORKS), ...Object.keys(ALIASES)].join(', ')}`);
  }
  return net;
}

/** Block subsidy in base units at a height (50 coins halving every interval). */
export function blockSubsidy(net: Network, height: number): bigint {
  const halvings = Math.floor(height / net.halvingInterval);
  if (halvings >= 64) return 0n;
  return (50n * 100_000_000n) >> BigInt(halvings);
}

/** The consensus parameters block validation needs (values from Bitcoin Core / Namecoin Core chainparams). */
export interface Consensus {
  /** Highest target a block's bits may encode (Core's powLimit). */
  powLimit: bigint;
  /** First height where BIP141 applies (witness commitment expected). */
  segwitHeight: number;
  /** Namecoin merge mining: the chain ID in the block version, whether it is enforced, and the
   *  first height where a legacy (version 1, no chain ID) block is refused (-1: never). */
  auxpow: { chainId: number; strictChainId: boolean; legacyBlocksBefore: number } | undefined;
}

const LIMIT_32 = BigInt(`0x${'00000000'}${'f'.repeat(56)}`);
const LIMIT_REGTEST = BigInt(`0x7${'f'.repeat(63)}`);

export const CONSENSUS: Readonly<Record<NetworkName, Consensus>> = {
  bitcoin: { powLimit: LIMIT_32, segwitHeight: 481824, auxpow: undefined },
  'bitcoin-testnet': { powLimit: LIMIT_32, segwitHeight: 834624, auxpow: undefined },
  'bitcoin-testnet4': { powLimit: LIMIT_32, segwitHeight: 1, auxpow: undefined },
  'bitcoin-signet': { powLimit: BigInt(`0x00000377ae${'0'.repeat(54)}`), segwitHeight: 1, auxpow: undefined },
  'bitcoin-regtest': { powLimit: LIMIT_REGTEST, segwitHeight: 0, auxpow: undefined },
  namecoin: { powLimit: LIMIT_32, segwitHeight: 475000, auxpow: { chainId: 1, strictChainId: true, legacyBlocksBefore: 19200 } },
  'namecoin-testnet': { powLimit: BigInt(`0x0000000${'f'.repeat(57)}`), segwitHeight: 232000, auxpow: { chainId: 1, strictChainId: false, legacyBlocksBefore: -1 } },
  'namecoin-regtest': { powLimit: LIMIT_REGTEST, segwitHeight: 0, auxpow: { chainId: 1, strictChainId: true, legacyBlocksBefore: 0 } },
};
