//! The Vulkan loader's layer interface (interface version 2, `vk_layer.h`): negotiation, the
//! instance and device chains, one dispatch table per instance and per device, and what the
//! generated wrappers call to record.
//!
//! A wrapper finds its next function by the loader's dispatch pointer, the first word of
//! every dispatchable handle: an instance and its physical devices share one, a device, its
//! queues and command buffers another. The tables live in a fixed array of atomic slots, so
//! the lookup on every call takes no lock; a destroyed instance's or device's table is
//! leaked (a few KiB), never freed under a thread that may still be reading it.

use crate::generated::vk::{vk_wrapper_address, VK_COUNT, VK_FIRST, VK_LEVEL, VK_NAMES};
use crate::{capture, hook, real};
use ash::vk::{self, Handle};
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::*};
use std::sync::Mutex;

/// `VkNegotiateLayerInterface` (vk_layer.h).
#[repr(C)]
pub struct NegotiateLayerInterface {
    s_type: i32,
    p_next: *mut c_void,
    loader_layer_interface_version: u32,
    get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
    get_physical_device_proc_addr: *const c_void,
}

/// `LAYER_NEGOTIATE_INTERFACE_STRUCT`.
const NEGOTIATE_INTERFACE_STRUCT: i32 = 1;
/// `VK_LAYER_LINK_INFO`, the `VkLayerFunction` of the chain's next link.
const LAYER_LINK_INFO: i32 = 0;

/// `VkLayerInstanceLink`.
#[repr(C)]
struct InstanceLink {
    next: *mut InstanceLink,
    next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    next_get_physical_device_proc_addr: *const c_void,
}

/// `VkLayerDeviceLink`.
#[repr(C)]
struct DeviceLink {
    next: *mut DeviceLink,
    next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
}

/// `VkLayerInstanceCreateInfo` and `VkLayerDeviceCreateInfo`: the same head, and a union
/// whose first member, for `VK_LAYER_LINK_INFO`, is the link.
#[repr(C)]
struct ChainInfo<L> {
    s_type: vk::StructureType,
    p_next: *const c_void,
    function: i32,
    link: *mut L,
}

/// The next layer's functions for one instance or device.
struct Table {
    /// The instance or device itself.
    handle: usize,
    /// For a device: the fewest meaningful timestamp bits of the queue families it made
    /// queues of (0: some queue cannot time).
    valid_bits: u32,
    /// For a device: its physical device's properties (the timestamp period, the name).
    props: Option<Box<vk::PhysicalDeviceProperties>>,
    /// For a device: made with `occlusionQueryPrecise` (by the program, or by the layer where
    /// the device offers it).
    precise: bool,
    /// For a device: made with `pipelineStatisticsQuery` (likewise).
    statistics: bool,
    /// Next layer's `vkGetInstanceProcAddr` (instances) or `vkGetDeviceProcAddr` (devices).
    get_proc_addr: usize,
    /// Command `j`'s next function, 0 where the next layer has none.
    fns: Box<[usize]>,
}

const SLOTS: usize = 128;
static KEYS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static TABLES: [AtomicPtr<Table>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static ADDING: Mutex<()> = Mutex::new(());

/// The loader's dispatch pointer of a dispatchable handle: the key of its instance's or
/// device's table.
///
/// # Safety
/// `handle` is 0 or a live dispatchable Vulkan object.
pub unsafe fn key_of(handle: usize) -> usize {
    // SAFETY: the caller's contract.
    unsafe { key(handle) }
}

/// The loader's dispatch pointer of a dispatchable handle.
///
/// # Safety
/// `handle` is 0 or a live dispatchable Vulkan object.
unsafe fn key(handle: usize) -> usize {
    if handle == 0 {
        return 0;
    }
    // SAFETY: the loader contract: a dispatchable object starts with its dispatch pointer.
    unsafe { *(handle as *const usize) }
}

fn table(key: usize) -> Option<&'static Table> {
    if key == 0 {
        return None;
    }
    let i = KEYS.iter().position(|k| k.load(Acquire) == key)?;
    // SAFETY: a slot's table is set before its key and never freed.
    unsafe { TABLES[i].load(Acquire).as_ref() }
}

fn add(key: usize, t: Table) -> bool {
    let _g = ADDING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(i) = KEYS.iter().position(|k| k.load(Acquire) == 0) else {
        return false;
    };
    TABLES[i].store(Box::into_raw(Box::new(t)), Release);
    KEYS[i].store(key, Release);
    true
}

fn remove(key: usize) {
    let _g = ADDING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = KEYS.iter().find(|k| k.load(Acquire) == key) {
        k.store(0, Release);
    }
}

/// The next layer's function for command `j` of the instance or device that `handle`
/// belongs to; the agent's do-nothing stub where there is none (a call the program could
/// not validly make).
///
/// # Safety
/// `handle` is 0 or a live dispatchable Vulkan object.
#[inline]
pub unsafe fn next(j: usize, handle: usize) -> usize {
    // SAFETY: the caller's contract.
    let key = unsafe { key(handle) };
    match table(key).map(|t| t.fns[j]) {
        Some(p) if p != 0 => p,
        _ => real::missing(),
    }
}

/// Whether the current frame is being captured.
#[inline(always)]
pub fn recording() -> bool {
    capture::recording()
}

/// A call's clock stamp, just before its next function.
#[inline(always)]
pub fn stamp() -> u64 {
    hook::stamp()
}

/// Records a call of command `j`, as the GL wrappers record a plain call, on the context of
/// its instance or device (the dispatch key of its first argument, a dispatchable handle).
#[inline(always)]
pub fn record<const N: usize>(j: usize, site: u64, begin: u64, args: &[u64; N], ret: Option<u64>) {
    if recording() {
        // SAFETY: the first argument of every wrapped command is a live dispatchable handle.
        let ctx = unsafe { key(args[0] as usize) } as u64;
        hook::plain_in(VK_FIRST + j, ctx, false, site, begin, args, ret);
    }
}

/// [`record`] for a command something refers to (timed, a render pass begin, a submit): its
/// frame and place.
#[inline(always)]
pub fn record_placed<const N: usize>(
    j: usize,
    site: u64,
    begin: u64,
    args: &[u64; N],
    ret: Option<u64>,
) -> Option<(u64, u32)> {
    if recording() {
        // SAFETY: as in `record`.
        let ctx = unsafe { key(args[0] as usize) } as u64;
        hook::plain_in(VK_FIRST + j, ctx, true, site, begin, args, ret)
    } else {
        None
    }
}

/// What measuring a device's commands needs: the device's functions (the next layer's), its
/// properties, its timestamps' meaningful bits, and whether occlusion counts are exact.
pub struct DeviceFacts {
    /// The next layer's device functions.
    pub device: ash::Device,
    /// The physical device's properties (`limits.timestamp_period`: nanoseconds per tick).
    pub props: vk::PhysicalDeviceProperties,
    /// Meaningful bits of a timestamp on every queue family the device uses.
    pub valid_bits: u32,
    /// Occlusion queries may be precise.
    pub precise: bool,
    /// Pipeline statistics queries may be made.
    pub statistics: bool,
}

/// The facts of the device whose dispatch key is `key`.
pub fn device_facts(key: usize) -> Option<DeviceFacts> {
    let t = table(key)?;
    let handle = vk::Device::from_raw(t.handle as u64);
    // SAFETY: the table's function is the next layer's vkGetDeviceProcAddr.
    let gdpa =
        unsafe { std::mem::transmute::<usize, vk::PFN_vkGetDeviceProcAddr>(t.get_proc_addr) };
    // SAFETY: every name is asked of this device's next layer, which gives its own functions.
    let device = unsafe {
        ash::Device::load_with(
            |name| gdpa(handle, name.as_ptr()).map_or(std::ptr::null(), |f| f as *const c_void),
            handle,
        )
    };
    Some(DeviceFacts {
        device,
        props: *t.props.as_deref()?,
        valid_bits: t.valid_bits,
        precise: t.precise,
        statistics: t.statistics,
    })
}

/// After every `vkQueuePresentKHR`: the frame ends, as at a GL swap; outside captured frames
/// a dormant layer also looks for its wake-up.
pub fn presented(ok: bool) {
    if recording() && crate::capture::heat() {
        // Heat is painted for GL, GLES and VG frames only: a Vulkan frame says why it has no
        // map instead of leaving the viewer to suggest `--heat`, which was given.
        let _ = std::panic::catch_unwind(|| {
            crate::outbox::send_record(gpuheat_session::Record::HeatMissing(
                gpuheat_session::HeatMissing {
                    frame: crate::capture::frame(),
                    context: 0,
                    reason: "heat maps of Vulkan frames are not painted yet (GL, GLES and \
                             OpenVG frames are)"
                        .into(),
                },
            ))
        });
    }
    hook::swapped(u64::from(ok));
    if !recording() {
        super::dormant_present();
    }
}

fn name_of(p: *const c_char) -> Option<&'static [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the loader and programs pass NUL-terminated names.
    Some(unsafe { CStr::from_ptr(p) }.to_bytes())
}

fn index_of(name: &[u8]) -> Option<usize> {
    VK_NAMES.binary_search_by(|n| n.as_bytes().cmp(name)).ok()
}

/// This layer's own functions, which the generated wrappers do not cover.
fn own(name: &[u8]) -> Option<usize> {
    Some(match name {
        b"vkGetInstanceProcAddr" => get_instance_proc_addr as *const () as usize,
        b"vkGetDeviceProcAddr" => get_device_proc_addr as *const () as usize,
        b"vkCreateInstance" => create_instance as *const () as usize,
        b"vkDestroyInstance" => destroy_instance as *const () as usize,
        b"vkCreateDevice" => create_device as *const () as usize,
        b"vkDestroyDevice" => destroy_device as *const () as usize,
        _ => return None,
    })
}

/// The loader's entry into the layer, named in the manifest's `functions`
/// (`control::vulkan::NEGOTIATE`).
///
/// # Safety
/// `v` is the loader's negotiation structure.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "system" fn gpuheat_vkNegotiateLoaderLayerInterfaceVersion(
    v: *mut NegotiateLayerInterface,
) -> vk::Result {
    // SAFETY: the loader passes a valid structure.
    let Some(v) = (unsafe { v.as_mut() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if v.s_type != NEGOTIATE_INTERFACE_STRUCT || v.loader_layer_interface_version < 2 {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    v.loader_layer_interface_version = 2;
    v.get_instance_proc_addr = Some(get_instance_proc_addr);
    v.get_device_proc_addr = Some(get_device_proc_addr);
    v.get_physical_device_proc_addr = std::ptr::null();
    vk::Result::SUCCESS
}

/// Turns an address into the loader's `PFN_vkVoidFunction`.
fn as_void_fn(p: usize) -> vk::PFN_vkVoidFunction {
    // SAFETY: `p` is 0 or a function's address; `Option<fn>` has the null niche.
    unsafe { std::mem::transmute::<usize, vk::PFN_vkVoidFunction>(p) }
}

unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    let n = name_of(name)?;
    if let Some(p) = own(n) {
        return as_void_fn(p);
    }
    let handle = instance.as_raw() as usize;
    // SAFETY: the program passes a live instance (or null).
    let t = table(unsafe { key(handle) })?;
    // SAFETY: the table's function is the next layer's vkGetInstanceProcAddr.
    let next = unsafe {
        std::mem::transmute::<usize, vk::PFN_vkGetInstanceProcAddr>(t.get_proc_addr)(instance, name)
    };
    // A wrapper only where the next layer has the command, and, for an instance command,
    // where the instance's table has it (a device command dispatches through its device).
    match index_of(n) {
        Some(j) if next.is_some() && (VK_LEVEL[j] == 1 || t.fns[j] != 0) => {
            as_void_fn(vk_wrapper_address(j))
        }
        _ => next,
    }
}

unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    let n = name_of(name)?;
    if let Some(p) = own(n).filter(|_| n != b"vkCreateInstance" && n != b"vkCreateDevice") {
        return as_void_fn(p);
    }
    // SAFETY: the program passes a live device.
    let t = table(unsafe { key(device.as_raw() as usize) })?;
    // SAFETY: the table's function is the next layer's vkGetDeviceProcAddr.
    let next = unsafe {
        std::mem::transmute::<usize, vk::PFN_vkGetDeviceProcAddr>(t.get_proc_addr)(device, name)
    };
    match index_of(n) {
        Some(j) if next.is_some() && VK_LEVEL[j] == 1 && t.fns[j] != 0 => {
            as_void_fn(vk_wrapper_address(j))
        }
        _ => next,
    }
}

/// The chain's link for this layer in `p_next`, advanced for the next layer.
///
/// # Safety
/// `p_next` is a create info's valid `pNext` chain.
unsafe fn take_link<L>(mut p: *const c_void, s_type: vk::StructureType) -> Option<*mut L> {
    while !p.is_null() {
        let info = p as *mut ChainInfo<L>;
        // SAFETY: every structure of a pNext chain starts with sType and pNext.
        let (ty, function) = unsafe { ((*info).s_type, (*info).function) };
        if ty == s_type && function == LAYER_LINK_INFO {
            // SAFETY: the loader's chain info of this type holds a link.
            unsafe {
                let link = (*info).link;
                if link.is_null() {
                    return None;
                }
                // The next layer finds its own link here. `next` is every link's first field.
                (*info).link = *(link as *mut *mut L);
                return Some(link);
            }
        }
        // SAFETY: as above.
        p = unsafe { (*info).p_next };
    }
    None
}

/// Each command's next function, by `lookup` of its NUL-terminated name, for `level`.
fn functions(level: u8, lookup: impl Fn(&CStr) -> usize) -> Box<[usize]> {
    (0..VK_COUNT)
        .map(|j| {
            if VK_LEVEL[j] != level {
                return 0;
            }
            CString::new(VK_NAMES[j]).map_or(0, |c| lookup(&c))
        })
        .collect()
}

unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Instance,
) -> vk::Result {
    // SAFETY: the loader passes a valid create info with its chain.
    let Some(link) = (unsafe {
        info.as_ref().and_then(|i| {
            take_link::<InstanceLink>(i.p_next, vk::StructureType::LOADER_INSTANCE_CREATE_INFO)
        })
    }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the link the loader gave.
    let gipa = unsafe { (*link).next_get_instance_proc_addr };
    // SAFETY: a GIPA with a null instance answers vkCreateInstance.
    let Some(create) = (unsafe { gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: it is the next layer's vkCreateInstance.
    let create = unsafe {
        std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkCreateInstance>(create)
    };
    // SAFETY: the program's arguments, forwarded.
    let r = unsafe { create(info, alloc, out) };
    if r != vk::Result::SUCCESS {
        return r;
    }
    // SAFETY: the next layer wrote the new instance.
    let instance = unsafe { *out };
    let made = catch_unwind(AssertUnwindSafe(|| {
        let fns = functions(0, |name| {
            // SAFETY: the next layer's GIPA, asked for a name of this instance.
            let f = unsafe { gipa(instance, name.as_ptr()) };
            f.map_or(0, |f| f as usize)
        });
        let handle = instance.as_raw() as usize;
        let table = Table {
            handle,
            valid_bits: 0,
            props: None,
            precise: false,
            statistics: false,
            get_proc_addr: gipa as usize,
            fns,
        };
        // SAFETY: the instance was just created.
        add(unsafe { key(handle) }, table)
    }));
    if !matches!(made, Ok(true)) {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    super::started();
    r
}

unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    alloc: *const vk::AllocationCallbacks<'_>,
) {
    let handle = instance.as_raw() as usize;
    // SAFETY: the program passes a live instance (or null).
    let k = unsafe { key(handle) };
    let Some(t) = table(k) else { return };
    let Some(j) = index_of(b"vkDestroyInstance") else {
        return;
    };
    let f = t.fns[j];
    remove(k);
    if f != 0 {
        // SAFETY: the next layer's vkDestroyInstance.
        unsafe { std::mem::transmute::<usize, vk::PFN_vkDestroyInstance>(f)(instance, alloc) };
    }
}

unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Device,
) -> vk::Result {
    // SAFETY: the loader passes a valid create info with its chain.
    let Some(link) = (unsafe {
        info.as_ref().and_then(|i| {
            take_link::<DeviceLink>(i.p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO)
        })
    }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the link the loader gave.
    let (gipa, gdpa) = unsafe {
        (
            (*link).next_get_instance_proc_addr,
            (*link).next_get_device_proc_addr,
        )
    };
    // SAFETY: a physical device shares its instance's dispatch pointer.
    let instance_key = unsafe { key(physical.as_raw() as usize) };
    let Some(it) = table(instance_key) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let instance = vk::Instance::from_raw(it.handle as u64);
    // SAFETY: the next layer's GIPA, asked for this instance's vkCreateDevice.
    let Some(create) = (unsafe { gipa(instance, c"vkCreateDevice".as_ptr()) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: it is the next layer's vkCreateDevice.
    let create = unsafe {
        std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkCreateDevice>(create)
    };
    // Exact occlusion counts and pipeline statistics where the device offers them.
    // SAFETY: the program's create info; the instance's functions.
    let (r, (precise, statistics)) =
        unsafe { create_with_queries(it, physical, info, alloc, out, create) };
    if r != vk::Result::SUCCESS {
        return r;
    }
    // SAFETY: the next layer wrote the new device.
    let device = unsafe { *out };
    let made = catch_unwind(AssertUnwindSafe(|| {
        let fns = functions(1, |name| {
            // SAFETY: the next layer's GDPA, asked for a name of this device.
            let f = unsafe { gdpa(device, name.as_ptr()) };
            f.map_or(0, |f| f as usize)
        });
        let handle = device.as_raw() as usize;
        // SAFETY: the program's create info, valid for the call that just succeeded.
        let (valid_bits, props) = unsafe { timestamp_facts(it, physical, &*info) };
        let table = Table {
            handle,
            valid_bits,
            props: props.map(Box::new),
            precise,
            statistics,
            get_proc_addr: gdpa as usize,
            fns,
        };
        // SAFETY: the device was just created.
        add(unsafe { key(handle) }, table)
    }));
    if !matches!(made, Ok(true)) {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    r
}

/// The timestamp period of `physical`, and the fewest meaningful timestamp bits of the queue
/// families `info` makes queues of, through the instance's next functions.
///
/// # Safety
/// `physical` belongs to the instance of `it`; `info` is a valid device create info.
unsafe fn timestamp_facts(
    it: &Table,
    physical: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo<'_>,
) -> (u32, Option<vk::PhysicalDeviceProperties>) {
    let f = |name: &[u8]| index_of(name).map_or(0, |j| it.fns[j]);
    let (props, families) = (
        f(b"vkGetPhysicalDeviceProperties"),
        f(b"vkGetPhysicalDeviceQueueFamilyProperties"),
    );
    if props == 0 || families == 0 {
        return (0, None);
    }
    // SAFETY: the next layer's functions, called as Vulkan defines them.
    unsafe {
        let props = std::mem::transmute::<usize, vk::PFN_vkGetPhysicalDeviceProperties>(props);
        let families = std::mem::transmute::<usize, vk::PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
            families,
        );
        let mut p = vk::PhysicalDeviceProperties::default();
        props(physical, &mut p);
        let mut n = 0u32;
        families(physical, &mut n, std::ptr::null_mut());
        let mut list = vec![vk::QueueFamilyProperties::default(); n as usize];
        families(physical, &mut n, list.as_mut_ptr());
        list.truncate(n as usize);
        let queues = if info.p_queue_create_infos.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(
                info.p_queue_create_infos,
                info.queue_create_info_count as usize,
            )
        };
        let bits = queues
            .iter()
            .map(|q| {
                list.get(q.queue_family_index as usize)
                    .map_or(0, |f| f.timestamp_valid_bits)
            })
            .min()
            .unwrap_or(0);
        (bits, Some(p))
    }
}

/// The device features the layer's queries need, as far as `offered` has them: exact
/// occlusion counts and pipeline statistics.
fn wanted(offered: &vk::PhysicalDeviceFeatures) -> (bool, bool) {
    (
        offered.occlusion_query_precise == vk::TRUE,
        offered.pipeline_statistics_query == vk::TRUE,
    )
}

/// `features` with the layer's query features of `want` turned on.
fn with_queries(
    mut features: vk::PhysicalDeviceFeatures,
    want: (bool, bool),
) -> vk::PhysicalDeviceFeatures {
    if want.0 {
        features.occlusion_query_precise = vk::TRUE;
    }
    if want.1 {
        features.pipeline_statistics_query = vk::TRUE;
    }
    features
}

/// Calls the next layer's `create` (vkCreateDevice) with the program's arguments, asking
/// also for `occlusionQueryPrecise` and `pipelineStatisticsQuery` where the physical device
/// has them; returns its result and which of the two the device has. The program's create
/// info is never written: a features struct in it is copied, or one in its pNext chain
/// (`VkPhysicalDeviceFeatures2`) set for the call and put back. Enabling a query feature
/// changes nothing the program draws.
///
/// # Safety
/// The arguments of a valid vkCreateDevice call; `it` the table of the physical device's
/// instance.
unsafe fn create_with_queries(
    it: &Table,
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Device,
    create: vk::PFN_vkCreateDevice,
) -> (vk::Result, (bool, bool)) {
    let features = index_of(b"vkGetPhysicalDeviceFeatures").map_or(0, |j| it.fns[j]);
    // SAFETY: the caller's contract.
    let plain = || unsafe { (create(physical, info, alloc, out), (false, false)) };
    if features == 0 {
        return plain();
    }
    // SAFETY: the next layer's vkGetPhysicalDeviceFeatures, writing into a local.
    let want = unsafe {
        let f = std::mem::transmute::<usize, vk::PFN_vkGetPhysicalDeviceFeatures>(features);
        let mut v = vk::PhysicalDeviceFeatures::default();
        f(physical, &mut v);
        wanted(&v)
    };
    if want == (false, false) {
        return plain();
    }
    // SAFETY: the program's valid create info.
    let ci = unsafe { *info };
    // SAFETY: its features struct, when it has one.
    if let Some(asked) = unsafe { ci.p_enabled_features.as_ref() } {
        let ours = with_queries(*asked, want);
        let mut with = ci;
        with.p_enabled_features = &ours;
        // SAFETY: the program's create info with our copy of its features.
        return unsafe { (create(physical, &with, alloc, out), want) };
    }
    // A VkPhysicalDeviceFeatures2 in the chain (then pEnabledFeatures must be null).
    let mut p = ci.p_next as *mut vk::BaseOutStructure<'_>;
    while !p.is_null() {
        // SAFETY: every structure of a pNext chain starts with sType and pNext.
        let (ty, next) = unsafe { ((*p).s_type, (*p).p_next) };
        if ty == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
            let f2 = p as *mut vk::PhysicalDeviceFeatures2<'_>;
            // SAFETY: a VkPhysicalDeviceFeatures2 of the program's chain, set for the call
            // and put back right after it.
            unsafe {
                let before = (*f2).features;
                (*f2).features = with_queries(before, want);
                let r = create(physical, info, alloc, out);
                (*f2).features = before;
                return (r, want);
            }
        }
        p = next;
    }
    let ours = with_queries(vk::PhysicalDeviceFeatures::default(), want);
    let mut with = ci;
    with.p_enabled_features = &ours;
    // SAFETY: the program's create info with a features struct of ours.
    unsafe { (create(physical, &with, alloc, out), want) }
}

unsafe extern "system" fn destroy_device(
    device: vk::Device,
    alloc: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: the program passes a live device (or null).
    let k = unsafe { key(device.as_raw() as usize) };
    let Some(t) = table(k) else { return };
    let Some(j) = index_of(b"vkDestroyDevice") else {
        return;
    };
    let f = t.fns[j];
    remove(k);
    if f != 0 {
        // SAFETY: the next layer's vkDestroyDevice.
        unsafe { std::mem::transmute::<usize, vk::PFN_vkDestroyDevice>(f)(device, alloc) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_cover_the_commands_a_frame_makes() {
        for name in [
            "vkCmdDraw",
            "vkCmdDrawIndexed",
            "vkQueueSubmit",
            "vkQueuePresentKHR",
            "vkBeginCommandBuffer",
            "vkEnumeratePhysicalDevices",
        ] {
            assert!(index_of(name.as_bytes()).is_some(), "{name}");
        }
        let level = |n: &str| VK_LEVEL[index_of(n.as_bytes()).unwrap()];
        assert_eq!(level("vkEnumeratePhysicalDevices"), 0);
        assert_eq!(level("vkCmdDraw"), 1);
        assert_eq!(level("vkQueuePresentKHR"), 1);
        // A global command reaches no layer, and the layer's own are not generated twice.
        assert!(index_of(b"vkEnumerateInstanceVersion").is_none());
        assert!(own(b"vkCreateDevice").is_some());
    }

    #[test]
    fn the_manifest_names_the_exported_entry() {
        assert_eq!(
            gpuheat_session::control::vulkan::NEGOTIATE,
            stringify!(gpuheat_vkNegotiateLoaderLayerInterfaceVersion)
        );
    }
}
