/**
 * The dental supply catalogue the seed history draws from: categories, and item templates with
 * how clinics use them. Usage figures are per clinic and day at intensity 1 (a small practice);
 * the generator scales them. Costs are minor units per `per` item units.
 */
export type CategoryKey =
  | 'infection'
  | 'ppe'
  | 'disinfection'
  | 'sterilisation'
  | 'anaesthesia'
  | 'restorative'
  | 'endodontics'
  | 'rotary'
  | 'impression'
  | 'surgery'
  | 'implantology'
  | 'patientCare';

export type CategoryTemplate = { readonly key: CategoryKey; readonly name: string; readonly parent?: CategoryKey };

export const categoryTemplates: readonly CategoryTemplate[] = [
  { key: 'infection', name: 'Infection control' },
  { key: 'ppe', name: 'Personal protective equipment', parent: 'infection' },
  { key: 'disinfection', name: 'Disinfection', parent: 'infection' },
  { key: 'sterilisation', name: 'Sterilisation', parent: 'infection' },
  { key: 'anaesthesia', name: 'Anaesthesia' },
  { key: 'restorative', name: 'Restorative materials' },
  { key: 'endodontics', name: 'Endodontics' },
  { key: 'rotary', name: 'Burs and rotary instruments' },
  { key: 'impression', name: 'Impression materials' },
  { key: 'surgery', name: 'Oral surgery' },
  { key: 'implantology', name: 'Implantology' },
  { key: 'patientCare', name: 'Patient care and prophylaxis' },
];

export type UnitOfMeasure = 'unit' | 'box' | 'milliliter';

export type ItemTemplate = {
  readonly key: string;
  readonly category: CategoryKey;
  readonly sku: string;
  readonly name: string;
  /** Sizes, shades or dimensions, most used first; larger scales carry more of them. */
  readonly variants?: readonly string[];
  readonly unitOfMeasure: UnitOfMeasure;
  readonly packaging: string;
  readonly criticality: 'low' | 'medium' | 'high' | 'critical';
  readonly tracksLot: boolean;
  readonly tracksSerial: boolean;
  readonly highValue: boolean;
  /** Shelf life from manufacture; present exactly for expiry-tracked items. */
  readonly shelfLifeDays?: number;
  /** `daily`: used chair-side every day; `case`: ordered and used per surgical case. */
  readonly use: 'daily' | 'case';
  /** Uses per clinic and day at intensity 1 (daily items). */
  readonly usesPerDay: number;
  readonly qtyPerUse: readonly [number, number];
  /** Quantity in one purchased box (case, carton) at intensity 1. */
  readonly caseQty: number;
  readonly cost?: { readonly amount: number; readonly per: number; readonly status: 'confirmed' | 'estimated' };
  readonly status?: 'inactive' | 'discontinued';
};

const daily = { use: 'daily', tracksSerial: false, highValue: false } as const;

export const itemTemplates: readonly ItemTemplate[] = [
  { ...daily, key: 'glovesNitrile', category: 'ppe', sku: 'PPE-GLV-NIT', name: 'Nitrile examination gloves, powder-free', variants: ['size M', 'size S', 'size L', 'size XL'], unitOfMeasure: 'box', packaging: 'Box of 100 gloves', criticality: 'high', tracksLot: true, usesPerDay: 1.1, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 690, per: 1, status: 'confirmed' } },
  { ...daily, key: 'glovesSurgical', category: 'ppe', sku: 'PPE-GLV-STR', name: 'Sterile surgical gloves, latex-free', variants: ['size 7', 'size 7.5', 'size 6.5', 'size 8'], unitOfMeasure: 'box', packaging: 'Box of 50 pairs', criticality: 'high', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.12, qtyPerUse: [1, 1], caseQty: 4, cost: { amount: 3450, per: 1, status: 'confirmed' } },
  { ...daily, key: 'masks', category: 'ppe', sku: 'PPE-MSK-IIR', name: 'Surgical face masks type IIR', unitOfMeasure: 'box', packaging: 'Box of 50 masks', criticality: 'medium', tracksLot: true, usesPerDay: 0.35, qtyPerUse: [1, 1], caseQty: 20, cost: { amount: 520, per: 1, status: 'confirmed' } },
  { ...daily, key: 'respirators', category: 'ppe', sku: 'PPE-FFP2', name: 'FFP2 respirators', unitOfMeasure: 'box', packaging: 'Box of 20 respirators', criticality: 'medium', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.08, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1890, per: 1, status: 'estimated' } },
  { ...daily, key: 'glovesLatex', category: 'ppe', sku: 'PPE-GLV-LTX', name: 'Latex examination gloves, powdered', variants: ['size M'], unitOfMeasure: 'box', packaging: 'Box of 100 gloves', criticality: 'low', tracksLot: true, usesPerDay: 0, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 450, per: 1, status: 'confirmed' }, status: 'inactive' },
  { ...daily, key: 'surfaceDisinfectant', category: 'disinfection', sku: 'DIS-SRF-1L', name: 'Surface disinfectant spray, alcohol-based', unitOfMeasure: 'milliliter', packaging: '1 l bottle with spray head', criticality: 'high', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.6, qtyPerUse: [40, 120], caseQty: 6000, cost: { amount: 1290, per: 1000, status: 'confirmed' } },
  { ...daily, key: 'instrumentDisinfectant', category: 'disinfection', sku: 'DIS-INS-2L', name: 'Instrument disinfectant concentrate', unitOfMeasure: 'milliliter', packaging: '2 l bottle', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.25, qtyPerUse: [20, 60], caseQty: 8000, cost: { amount: 3890, per: 2000, status: 'confirmed' } },
  { ...daily, key: 'handRub', category: 'disinfection', sku: 'DIS-HND-500', name: 'Surgical hand rub', unitOfMeasure: 'milliliter', packaging: '500 ml bottle', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.5, qtyPerUse: [10, 40], caseQty: 6000, cost: { amount: 790, per: 500, status: 'estimated' } },
  { ...daily, key: 'mouthwash', category: 'disinfection', sku: 'DIS-CHX-1L', name: 'Chlorhexidine mouthwash 0.12%', unitOfMeasure: 'milliliter', packaging: '1 l bottle', criticality: 'low', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.3, qtyPerUse: [15, 30], caseQty: 6000, cost: { amount: 690, per: 1000, status: 'confirmed' } },
  { ...daily, key: 'pouches', category: 'sterilisation', sku: 'STE-PCH', name: 'Self-sealing sterilisation pouches', variants: ['90 × 230 mm', '135 × 280 mm', '57 × 130 mm'], unitOfMeasure: 'box', packaging: 'Box of 200 pouches', criticality: 'high', tracksLot: true, usesPerDay: 0.3, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1150, per: 1, status: 'confirmed' } },
  { ...daily, key: 'indicatorStrips', category: 'sterilisation', sku: 'STE-IND-C5', name: 'Class 5 chemical indicator strips', unitOfMeasure: 'box', packaging: 'Box of 250 strips', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.05, qtyPerUse: [1, 1], caseQty: 4, cost: { amount: 4200, per: 1, status: 'confirmed' } },
  { ...daily, key: 'lidocaine', category: 'anaesthesia', sku: 'ANE-LID-2E', name: 'Lidocaine 2% with epinephrine 1:100,000, 1.8 ml cartridges', unitOfMeasure: 'box', packaging: 'Box of 50 cartridges', criticality: 'critical', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.2, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 3890, per: 1, status: 'confirmed' } },
  { ...daily, key: 'articaine', category: 'anaesthesia', sku: 'ANE-ART-4E', name: 'Articaine 4% with epinephrine 1:100,000, 1.7 ml cartridges', unitOfMeasure: 'box', packaging: 'Box of 50 cartridges', criticality: 'critical', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.25, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 4650, per: 1, status: 'confirmed' } },
  { ...daily, key: 'mepivacaine', category: 'anaesthesia', sku: 'ANE-MEP-3P', name: 'Mepivacaine 3% plain, 1.8 ml cartridges', unitOfMeasure: 'box', packaging: 'Box of 50 cartridges', criticality: 'high', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.06, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 4100, per: 1, status: 'confirmed' } },
  { ...daily, key: 'topicalGel', category: 'anaesthesia', sku: 'ANE-TOP-BZC', name: 'Benzocaine 20% topical gel', unitOfMeasure: 'unit', packaging: '30 g jar', criticality: 'low', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.06, qtyPerUse: [1, 1], caseQty: 12, cost: { amount: 690, per: 1, status: 'estimated' } },
  { ...daily, key: 'needles', category: 'anaesthesia', sku: 'ANE-NDL-30S', name: 'Dental injection needles 30G short', unitOfMeasure: 'box', packaging: 'Box of 100 needles', criticality: 'high', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.12, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1250, per: 1, status: 'confirmed' } },
  { ...daily, key: 'composite', category: 'restorative', sku: 'RES-CMP-NH', name: 'Nanohybrid composite resin, 4 g syringe', variants: ['shade A2', 'shade A3', 'shade A1', 'shade A3.5', 'shade B1', 'shade B2'], unitOfMeasure: 'unit', packaging: '4 g syringe', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.45, qtyPerUse: [1, 1], caseQty: 20, cost: { amount: 2450, per: 1, status: 'confirmed' } },
  { ...daily, key: 'flowable', category: 'restorative', sku: 'RES-FLW', name: 'Flowable composite, 2 g syringe', variants: ['shade A2', 'shade A3'], unitOfMeasure: 'unit', packaging: '2 g syringe with 20 tips', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.2, qtyPerUse: [1, 1], caseQty: 20, cost: { amount: 1980, per: 1, status: 'confirmed' } },
  { ...daily, key: 'bonding', category: 'restorative', sku: 'RES-BND-UNI', name: 'Universal bonding agent', unitOfMeasure: 'milliliter', packaging: '5 ml bottle', criticality: 'high', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.5, qtyPerUse: [1, 2], caseQty: 60, cost: { amount: 8900, per: 5, status: 'confirmed' } },
  { ...daily, key: 'etchant', category: 'restorative', sku: 'RES-ETC-37', name: 'Phosphoric acid etching gel 37%', unitOfMeasure: 'milliliter', packaging: '3 ml syringe', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.35, qtyPerUse: [1, 2], caseQty: 60, cost: { amount: 990, per: 3, status: 'estimated' } },
  { ...daily, key: 'glassIonomer', category: 'restorative', sku: 'RES-GIC', name: 'Glass ionomer restorative cement', unitOfMeasure: 'unit', packaging: 'Kit: 15 g powder, 10 ml liquid', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.06, qtyPerUse: [1, 1], caseQty: 6, cost: { amount: 5400, per: 1, status: 'confirmed' } },
  { ...daily, key: 'amalgam', category: 'restorative', sku: 'RES-AML-1S', name: 'Amalgam capsules, 1 spill', unitOfMeasure: 'box', packaging: 'Box of 50 capsules', criticality: 'low', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 6100, per: 1, status: 'confirmed' }, status: 'discontinued' },
  { ...daily, key: 'rotaryFiles', category: 'endodontics', sku: 'END-NTI-2506', name: 'NiTi rotary files 25/.06', variants: ['25 mm', '21 mm', '31 mm'], unitOfMeasure: 'box', packaging: 'Blister of 6 files', criticality: 'high', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.12, qtyPerUse: [1, 1], caseQty: 12, cost: { amount: 4500, per: 1, status: 'confirmed' } },
  { ...daily, key: 'handFiles', category: 'endodontics', sku: 'END-KFL-1540', name: 'Stainless steel K-files ISO 15-40', unitOfMeasure: 'box', packaging: 'Box of 6 files', criticality: 'medium', tracksLot: true, usesPerDay: 0.1, qtyPerUse: [1, 1], caseQty: 12, cost: { amount: 690, per: 1, status: 'confirmed' } },
  { ...daily, key: 'gutta', category: 'endodontics', sku: 'END-GP-06', name: 'Gutta-percha points .06', unitOfMeasure: 'box', packaging: 'Box of 60 points', criticality: 'medium', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.1, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1350, per: 1, status: 'confirmed' } },
  { ...daily, key: 'paperPoints', category: 'endodontics', sku: 'END-PP', name: 'Absorbent paper points', unitOfMeasure: 'box', packaging: 'Box of 200 points', criticality: 'low', tracksLot: true, usesPerDay: 0.08, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 790, per: 1, status: 'estimated' } },
  { ...daily, key: 'hypochlorite', category: 'endodontics', sku: 'END-NAOCL-525', name: 'Sodium hypochlorite 5.25% irrigant', unitOfMeasure: 'milliliter', packaging: '500 ml bottle', criticality: 'high', tracksLot: true, shelfLifeDays: 365, usesPerDay: 0.25, qtyPerUse: [10, 30], caseQty: 6000, cost: { amount: 890, per: 500, status: 'confirmed' } },
  { ...daily, key: 'diamondBurs', category: 'rotary', sku: 'ROT-DIA-FG', name: 'Diamond bur FG, round', variants: ['ISO 012', 'ISO 014', 'ISO 010', 'ISO 016', 'ISO 018'], unitOfMeasure: 'unit', packaging: 'Blister of 5 burs', criticality: 'medium', tracksLot: true, usesPerDay: 0.35, qtyPerUse: [1, 2], caseQty: 50, cost: { amount: 320, per: 1, status: 'confirmed' } },
  { ...daily, key: 'carbideBurs', category: 'rotary', sku: 'ROT-TC-RA', name: 'Tungsten carbide bur RA, round', variants: ['size 2', 'size 4', 'size 1', 'size 6'], unitOfMeasure: 'unit', packaging: 'Blister of 5 burs', criticality: 'medium', tracksLot: true, usesPerDay: 0.15, qtyPerUse: [1, 1], caseQty: 50, cost: { amount: 280, per: 1, status: 'confirmed' } },
  { ...daily, key: 'polishers', category: 'rotary', sku: 'ROT-POL-DSC', name: 'Composite polishing discs', unitOfMeasure: 'box', packaging: 'Box of 50 discs', criticality: 'low', tracksLot: true, usesPerDay: 0.05, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 2350, per: 1, status: 'estimated' } },
  { ...daily, key: 'alginate', category: 'impression', sku: 'IMP-ALG-FS', name: 'Alginate impression material, fast set', unitOfMeasure: 'unit', packaging: '500 g bag', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.08, qtyPerUse: [1, 1], caseQty: 20, cost: { amount: 1190, per: 1, status: 'confirmed' } },
  { ...daily, key: 'pvsLight', category: 'impression', sku: 'IMP-PVS-LB', name: 'Polyvinyl siloxane impression material, light body', unitOfMeasure: 'milliliter', packaging: '2 × 50 ml cartridges', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.2, qtyPerUse: [5, 15], caseQty: 1200, cost: { amount: 3990, per: 100, status: 'confirmed' } },
  { ...daily, key: 'pvsPutty', category: 'impression', sku: 'IMP-PVS-PT', name: 'Polyvinyl siloxane putty', unitOfMeasure: 'unit', packaging: 'Kit: 2 × 300 ml', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.04, qtyPerUse: [1, 1], caseQty: 6, cost: { amount: 6490, per: 1, status: 'confirmed' } },
  { ...daily, key: 'impressionTrays', category: 'impression', sku: 'IMP-TRY', name: 'Disposable impression trays', variants: ['upper', 'lower'], unitOfMeasure: 'box', packaging: 'Box of 12 trays', criticality: 'low', tracksLot: false, usesPerDay: 0.08, qtyPerUse: [1, 1], caseQty: 10 },
  { ...daily, key: 'suturesPga', category: 'surgery', sku: 'SUR-PGA-40', name: 'PGA resorbable sutures 4-0, 19 mm needle', unitOfMeasure: 'box', packaging: 'Box of 12 sutures', criticality: 'high', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.07, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 5400, per: 1, status: 'confirmed' } },
  { ...daily, key: 'suturesSilk', category: 'surgery', sku: 'SUR-SLK-30', name: 'Silk sutures 3-0', unitOfMeasure: 'box', packaging: 'Box of 12 sutures', criticality: 'medium', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.04, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 2900, per: 1, status: 'confirmed' } },
  { ...daily, key: 'scalpelBlades', category: 'surgery', sku: 'SUR-BLD-15', name: 'Sterile scalpel blades No. 15', unitOfMeasure: 'box', packaging: 'Box of 100 blades', criticality: 'medium', tracksLot: true, shelfLifeDays: 1825, usesPerDay: 0.03, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1990, per: 1, status: 'confirmed' } },
  { ...daily, key: 'haemostatic', category: 'surgery', sku: 'SUR-HEM-COL', name: 'Collagen haemostatic sponges', unitOfMeasure: 'box', packaging: 'Box of 10 sponges', criticality: 'high', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.04, qtyPerUse: [1, 1], caseQty: 10 },
  { key: 'implant', category: 'implantology', sku: 'IMP-BLT', name: 'Bone-level tapered implant', variants: ['4.1 × 10 mm', '3.5 × 10 mm', '4.8 × 10 mm', '4.1 × 11.5 mm', '4.8 × 8 mm', '3.3 × 12 mm'], unitOfMeasure: 'unit', packaging: 'Sterile single-implant vial', criticality: 'critical', tracksLot: true, tracksSerial: true, highValue: true, shelfLifeDays: 1825, use: 'case', usesPerDay: 0, qtyPerUse: [1, 2], caseQty: 10, cost: { amount: 21500, per: 1, status: 'confirmed' } },
  { key: 'healingAbutment', category: 'implantology', sku: 'IMP-HAB', name: 'Healing abutment', variants: ['4.1 × 4 mm', '4.8 × 4 mm', '3.5 × 3 mm'], unitOfMeasure: 'unit', packaging: 'Sterile single unit', criticality: 'high', tracksLot: true, tracksSerial: true, highValue: false, use: 'case', usesPerDay: 0, qtyPerUse: [1, 2], caseQty: 10, cost: { amount: 4200, per: 1, status: 'confirmed' } },
  { key: 'boneGraft', category: 'implantology', sku: 'IMP-BBM-05', name: 'Deproteinised bovine bone mineral, 0.5 g', unitOfMeasure: 'unit', packaging: '0.5 g vial', criticality: 'high', tracksLot: true, tracksSerial: false, highValue: true, shelfLifeDays: 1825, use: 'case', usesPerDay: 0, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 11900, per: 1, status: 'confirmed' } },
  { key: 'membrane', category: 'implantology', sku: 'IMP-MEM-2525', name: 'Resorbable collagen membrane 25 × 25 mm', unitOfMeasure: 'unit', packaging: 'Sterile single unit', criticality: 'high', tracksLot: true, tracksSerial: false, highValue: true, shelfLifeDays: 1095, use: 'case', usesPerDay: 0, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 16900, per: 1, status: 'estimated' } },
  { ...daily, key: 'bibs', category: 'patientCare', sku: 'PAT-BIB-2P', name: 'Patient bibs, 2-ply', unitOfMeasure: 'box', packaging: 'Box of 500 bibs', criticality: 'low', tracksLot: false, usesPerDay: 0.1, qtyPerUse: [1, 1], caseQty: 4, cost: { amount: 2290, per: 1, status: 'confirmed' } },
  { ...daily, key: 'salivaEjectors', category: 'patientCare', sku: 'PAT-SEJ', name: 'Saliva ejectors', unitOfMeasure: 'box', packaging: 'Box of 100', criticality: 'medium', tracksLot: true, usesPerDay: 0.2, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 450, per: 1, status: 'confirmed' } },
  { ...daily, key: 'aspiratorTips', category: 'patientCare', sku: 'PAT-ASP', name: 'Surgical aspirator tips', unitOfMeasure: 'box', packaging: 'Box of 25', criticality: 'medium', tracksLot: true, usesPerDay: 0.15, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 890, per: 1, status: 'confirmed' } },
  { ...daily, key: 'cottonRolls', category: 'patientCare', sku: 'PAT-CTR-2', name: 'Cotton rolls No. 2', unitOfMeasure: 'box', packaging: 'Box of 300 rolls', criticality: 'low', tracksLot: false, usesPerDay: 0.15, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 520, per: 1, status: 'confirmed' } },
  { ...daily, key: 'prophyPaste', category: 'patientCare', sku: 'PAT-PRO-MED', name: 'Prophylaxis paste, medium grit, single dose', unitOfMeasure: 'box', packaging: 'Box of 200 cups', criticality: 'low', tracksLot: true, shelfLifeDays: 1095, usesPerDay: 0.05, qtyPerUse: [1, 1], caseQty: 6, cost: { amount: 3490, per: 1, status: 'confirmed' } },
  { ...daily, key: 'fluorideVarnish', category: 'patientCare', sku: 'PAT-FLV-5', name: 'Fluoride varnish 5% NaF, single dose', unitOfMeasure: 'box', packaging: 'Box of 50 doses', criticality: 'medium', tracksLot: true, shelfLifeDays: 730, usesPerDay: 0.05, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 6900, per: 1, status: 'confirmed' } },
  { ...daily, key: 'sensorCovers', category: 'patientCare', sku: 'PAT-XRS-CVR', name: 'X-ray sensor covers', unitOfMeasure: 'box', packaging: 'Box of 500 covers', criticality: 'low', tracksLot: true, usesPerDay: 0.05, qtyPerUse: [1, 1], caseQty: 10, cost: { amount: 1890, per: 1, status: 'confirmed' } },
];
