//! The Vulkan registry as the system's vk.xml (libvulkan-dev) gives it.

use gpuheat_registry::{vk, CType, Family, Registry};

#[test]
fn every_linux_vulkan_command_is_described_and_the_rest_are_other_platforms() {
    let reg = Registry::load_vk().expect("vk.xml (scripts/install-deps.sh installs it)");
    assert!(
        reg.skipped.iter().all(|s| s.why == vk::OTHER_PLATFORM),
        "commands of ours with unknown types: {:?}",
        reg.skipped
            .iter()
            .filter(|s| s.why != vk::OTHER_PLATFORM)
            .collect::<Vec<_>>()
    );
    // Vulkan 1.3 has 200+ core commands; with extensions, several hundred.
    assert!(reg.commands.len() > 400, "{}", reg.commands.len());
    assert!(reg.commands.iter().all(|c| c.family == Family::Vk));
    let get = |name: &str| reg.command(name).unwrap_or_else(|| panic!("{name}"));
    let tys = |name: &str| get(name).params.iter().map(|p| p.ty).collect::<Vec<_>>();
    use CType::*;
    // vkCmdDraw(VkCommandBuffer, uint32_t x4): a dispatchable handle is a pointer.
    assert_eq!(tys("vkCmdDraw"), [Ptr, U32, U32, U32, U32]);
    // A non-dispatchable handle and a VkDeviceSize are 64-bit, VkIndexType an int-sized enum.
    assert_eq!(tys("vkCmdBindIndexBuffer"), [Ptr, U64, U64, I32]);
    // VkPipelineStageFlags2 is a 64-bit mask; the query pool a handle.
    assert_eq!(tys("vkCmdWriteTimestamp2"), [Ptr, U64, U64, U32]);
    assert_eq!(tys("vkCmdSetBlendConstants"), [Ptr, Ptr]);
    assert_eq!(tys("vkCmdSetLineWidth"), [Ptr, F32]);
    assert_eq!(get("vkQueuePresentKHR").ret, I32);
    assert_eq!(get("vkGetInstanceProcAddr").ret, Ptr);
    // An alias has its target's signature.
    assert_eq!(tys("vkCmdWriteTimestamp2KHR"), tys("vkCmdWriteTimestamp2"));
    // Linux's window systems are in, other platforms' out.
    assert!(reg.command("vkCreateXlibSurfaceKHR").is_some());
    assert_eq!(
        tys("vkGetPhysicalDeviceXlibPresentationSupportKHR"),
        [Ptr, U32, Ptr, U64]
    );
    assert!(reg.command("vkCreateWin32SurfaceKHR").is_none());
    assert!(reg
        .skipped
        .iter()
        .any(|s| s.name == "vkCreateWin32SurfaceKHR"));
    // Vulkan SC's own commands are not Vulkan's.
    assert!(reg.command("vkGetFaultData").is_none());
}
