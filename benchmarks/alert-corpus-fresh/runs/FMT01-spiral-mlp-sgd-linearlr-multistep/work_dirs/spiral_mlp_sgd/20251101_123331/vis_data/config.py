model = dict(type='SpiralMLP')
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))
param_scheduler = [dict(type='LinearLR', start_factor=0.001, by_epoch=False, end=50), dict(type='MultiStepLR', by_epoch=True, milestones=[5, 8], gamma=0.1)]
train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
